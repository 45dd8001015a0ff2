internal import CMemory
internal import Foundation
public import RepairSyncStore

#if canImport(Glibc)
    internal import Glibc
#endif

/// What the daemon hands back when it goes to sleep after a run (the scheduler calls it once per idle stretch):
/// SQLite's page caches and compiled statements, the heap's free memory, and the clean pages of its own binary
/// that start-up and the run touched (`ReleasableMappings`). Each comes back on demand — a read reopens its
/// connection, a page of code is mapped in again from the page cache — at a cost of milliseconds once per run,
/// against tens of MiB held for nothing in between (docs/performance.md, "Idle RSS").
public enum IdleMemory {
    public struct Report: Sendable, Equatable {
        /// `VmRSS` before and after, in bytes.
        public var residentBefore: Int
        public var residentAfter: Int
        /// The resident bytes of the executable's mappings that were handed back.
        public var executableBytes: Int
    }

    /// Releases all three; the store's memory first, so the heap trim can return what SQLite freed.
    public static func release(store: ReplicaStore?) async -> Report {
        let before = ProcessMemory.current()?.resident ?? 0
        if let store { await store.releaseMemory() }
        trimHeap()
        let executable = releaseExecutablePages()
        let after = ProcessMemory.current()?.resident ?? 0
        return Report(residentBefore: before, residentAfter: after, executableBytes: executable)
    }

    /// Returns the heap's free memory to the kernel, from every malloc arena (the threads' included).
    public static func trimHeap() {
        _ = malloc_trim(0)
    }

    /// Advises `MADV_DONTNEED` over the executable's qualifying mappings; the resident bytes they had.
    @discardableResult
    public static func releaseExecutablePages() -> Int {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            let smaps = try? String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        else { return 0 }
        var released = 0
        for region in ReleasableMappings(smaps: smaps, executable: executable).regions {
            guard let start = UnsafeMutableRawPointer(bitPattern: region.range.lowerBound) else { continue }
            if madvise(start, Int(region.range.upperBound - region.range.lowerBound), MADV_DONTNEED) == 0 {
                released += region.residentBytes
            }
        }
        return released
    }
}

/// The process's resident memory from `/proc/self/status`, in bytes.
public struct ProcessMemory: Sendable, Equatable {
    public var resident: Int
    public var anonymous: Int
    public var fileBacked: Int

    public init(resident: Int, anonymous: Int, fileBacked: Int) {
        self.resident = resident
        self.anonymous = anonymous
        self.fileBacked = fileBacked
    }

    public static func current() -> ProcessMemory? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return ProcessMemory(status: status)
    }

    /// From the text of a `/proc/PID/status` (`VmRSS`, `RssAnon`, `RssFile`, in kB).
    public init?(status: String) {
        var fields: [Substring: Int] = [:]
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, ["VmRSS", "RssAnon", "RssFile"].contains(parts[0]) else { continue }
            // `VmRSS:\t  1234 kB`
            fields[parts[0]] = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
                .map { $0 * 1024 }
        }
        guard let resident = fields["VmRSS"], let anonymous = fields["RssAnon"], let file = fields["RssFile"] else {
            return nil
        }
        self.resident = resident
        self.anonymous = anonymous
        fileBacked = file
    }
}
