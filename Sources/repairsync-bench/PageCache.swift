import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What of a file the kernel holds in its page cache (mincore over a read-only mapping), and reading a whole file so
/// that it does: a read of a page not held goes to the disk, whatever the query above it.
enum PageCache {
    /// The share of `path`'s pages in the page cache, 0…1 (0 when it cannot be read).
    static func residency(_ path: String) -> Double {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let size = Int(lseek(fd, 0, SEEK_END))
        guard size > 0 else { return 0 }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else { return 0 }
        defer { munmap(mapping, size) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var pages = [UInt8](repeating: 0, count: (size + pageSize - 1) / pageSize)
        guard mincore(mapping, size, &pages) == 0 else { return 0 }
        return Double(pages.reduce(0) { $0 + Int($1 & 1) }) / Double(pages.count)
    }

    /// Reads `path` from start to end (into the page cache).
    static func readWhole(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
