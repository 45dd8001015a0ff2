/// The daemon's own executable pages that can be handed back while it sleeps, read from `/proc/self/smaps`.
///
/// Most of an idle daemon's resident memory is its binary: code and tables touched once while it started (the Swift
/// runtime's and Foundation's set-up, TLS, the configuration parser, the first sync), which it does not touch again
/// for hours. They are clean pages of a file, so dropping them from the process (`MADV_DONTNEED`) loses nothing: the
/// page cache keeps them as long as the system has room, and a page the daemon needs again is mapped back in on its
/// next touch. Meanwhile they no longer count against the daemon, and the kernel no longer shields them as the
/// mapped code of a running program when the shop's other software needs the memory.
///
/// Only mappings where that is true qualify: of the executable file itself (never a shared library, whose pages other
/// programs use), not writable, private, not locked, and with no anonymous pages — a page once written (relocated
/// data behind RELRO) is the process's own copy, which the advice would throw away.
public struct ReleasableMappings: Equatable, Sendable {
    public struct Region: Equatable, Sendable {
        /// Start and end addresses, as `/proc/self/smaps` gives them.
        public var range: Range<UInt>
        /// What the mapping had resident, in bytes.
        public var residentBytes: Int

        public init(range: Range<UInt>, residentBytes: Int) {
            self.range = range
            self.residentBytes = residentBytes
        }
    }

    public var regions: [Region]

    /// The mappings of `executable` (the path `/proc/self/exe` links to) in `smaps` that qualify.
    public init(smaps: String, executable: String) {
        var regions: [Region] = []
        var current: Mapping?
        func finish() {
            if let mapping = current, mapping.qualifies(for: executable) {
                regions.append(Region(range: mapping.range, residentBytes: mapping.residentKiB * 1024))
            }
        }
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            if let header = Mapping(header: line) {
                finish()
                current = header
            } else if current != nil {
                current!.read(field: line)
            }
        }
        finish()
        self.regions = regions
    }

    /// One mapping: its header line, then the fields that decide.
    private struct Mapping {
        var range: Range<UInt>
        var permissions: Substring
        var path: Substring
        var residentKiB = 0
        var anonymousKiB: Int?
        var locked = false

        /// `start-end perms offset dev inode [path]`; nil for a field line (`Name:  value`).
        init?(header line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, !fields[0].hasSuffix(":") else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                start < end, fields[1].count == 4
            else { return nil }
            range = start..<end
            permissions = fields[1]
            // The path is padded to a column: the spaces before it are not part of it (spaces inside it are).
            path = fields.count == 6 ? fields[5].drop(while: { $0 == " " }) : ""
        }

        mutating func read(field line: Substring) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return }
            let value = parts[1].split(separator: " ", omittingEmptySubsequences: true)
            switch parts[0] {
            case "Rss": residentKiB = value.first.flatMap { Int($0) } ?? 0
            case "Anonymous": anonymousKiB = value.first.flatMap { Int($0) }
            case "VmFlags": locked = value.contains("lo")
            default: break
            }
        }

        func qualifies(for executable: String) -> Bool {
            let flags = Array(permissions)
            // An unknown anonymous count (a kernel without the field) does not qualify.
            return path == executable && flags[1] == "-" && flags[3] == "p" && anonymousKiB == 0 && !locked
                && residentKiB > 0
        }
    }
}
