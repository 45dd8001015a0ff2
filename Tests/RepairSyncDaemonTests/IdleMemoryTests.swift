import BackendTestSupport
import Foundation
import GRDB
import RepairAPIDev
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncStore
import Testing

/// What the daemon hands back when it goes quiet after a run: only its own binary's clean pages, and the run's
/// caches, with everything working afterwards.
@Suite("Idle memory", .timeLimit(.minutes(2)))
struct IdleMemoryTests {
    static let executable = "/usr/bin/repairsyncd"

    /// One mapping of `/proc/PID/smaps`: the header line and the fields the choice reads.
    static func mapping(
        _ range: String, _ permissions: String, _ path: String, rss: Int, anonymous: Int, flags: String = "rd mr mw me"
    ) -> String {
        """
        \(range) \(permissions) 00000000 fe:01 1311 \(path.isEmpty ? "" : "                      \(path)")
        Size:               \(rss + 64) kB
        KernelPageSize:        4 kB
        Rss:                \(rss) kB
        Pss:                \(rss) kB
        Private_Clean:      \(rss - anonymous) kB
        Private_Dirty:      \(anonymous) kB
        Anonymous:          \(anonymous) kB
        Swap:                  0 kB
        Locked:                0 kB
        VmFlags: \(flags)
        """
    }

    @Test("only the executable's read-only, private, unlocked mappings with no page of their own qualify")
    func choice() {
        var mappings: [String] = []
        mappings.append(Self.mapping("55d4c0000000-55d4c0400000", "r--p", Self.executable, rss: 1024, anonymous: 0))
        mappings.append(
            Self.mapping(
                "55d4c0400000-55d4c2400000", "r-xp", Self.executable, rss: 20480, anonymous: 0, flags: "rd ex mr mw me")
        )
        // Relocated data behind RELRO: written once, the process's own copy.
        mappings.append(Self.mapping("55d4c2400000-55d4c2600000", "r--p", Self.executable, rss: 1800, anonymous: 1800))
        mappings.append(Self.mapping("55d4c2600000-55d4c2700000", "rw-p", Self.executable, rss: 200, anonymous: 120))
        // Locked (mlock): the advice would fail, and the admin asked for it to stay.
        mappings.append(
            Self.mapping("55d4c2700000-55d4c2800000", "r-xp", Self.executable, rss: 64, anonymous: 0, flags: "rd ex lo")
        )
        // Nothing resident: nothing to hand back.
        mappings.append(Self.mapping("55d4c2800000-55d4c2900000", "r--p", Self.executable, rss: 0, anonymous: 0))
        // A shared library: other programs use its pages.
        mappings.append(
            Self.mapping(
                "7f0000000000-7f0000200000", "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", rss: 1500, anonymous: 0))
        mappings.append(Self.mapping("7f0000400000-7f0000600000", "rw-p", "[heap]", rss: 4000, anonymous: 4000))
        mappings.append(Self.mapping("7f0000600000-7f0000700000", "rw-p", "", rss: 900, anonymous: 900))
        // A shared mapping of the same file is not the process's private copy.
        mappings.append(Self.mapping("7f0000700000-7f0000800000", "r--s", Self.executable, rss: 16, anonymous: 0))
        let smaps = mappings.joined(separator: "\n")
        let chosen = ReleasableMappings(smaps: smaps, executable: Self.executable)
        #expect(
            chosen.regions == [
                .init(range: 0x55d4_c000_0000..<0x55d4_c040_0000, residentBytes: 1024 * 1024),
                .init(range: 0x55d4_c040_0000..<0x55d4_c240_0000, residentBytes: 20480 * 1024),
            ])
    }

    @Test("a binary replaced on disk while it runs (an upgrade) is still its own; a path with spaces is read whole")
    func deletedExecutable() {
        let path = "/opt/repair shop/repairsyncd (deleted)"
        let smaps = Self.mapping("1000-5000", "r-xp", path, rss: 16, anonymous: 0)
        #expect(ReleasableMappings(smaps: smaps, executable: path).regions.map(\.range) == [0x1000..<0x5000])
        #expect(ReleasableMappings(smaps: smaps, executable: "/opt/repair shop/repairsyncd").regions.isEmpty)
    }

    @Test("a field the kernel does not give (no Anonymous line) does not qualify a mapping")
    func unknownAnonymous() {
        let smaps = Self.mapping("1000-5000", "r-xp", Self.executable, rss: 16, anonymous: 0)
            .split(separator: "\n").filter { !$0.hasPrefix("Anonymous") }.joined(separator: "\n")
        #expect(ReleasableMappings(smaps: smaps, executable: Self.executable).regions.isEmpty)
    }

    /// The test process's own executable pages, as the daemon would hand back its own.
    static func executableResident() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        return ReleasableMappings(smaps: smaps, executable: executable).regions.reduce(0) { $0 + $1.residentBytes }
    }

    @Test("handing back this process's executable pages takes them out of its resident memory, and its code still runs")
    func executablePagesLeave() throws {
        let before = try Self.executableResident()
        #expect(before > 1024 * 1024, "the test binary has \(before) bytes of clean pages resident")
        let released = IdleMemory.releaseExecutablePages()
        let after = try Self.executableResident()
        // Other tests run meanwhile and map some pages back in; most stay out.
        #expect(released >= before / 2, "released \(released) of \(before)")
        // (This process goes on running: the parser's code and this test's were among the pages dropped.)
        #expect(after < before / 2, "resident \(before) -> \(after)")
    }

    @Test(
        "after a run, once quiet, the scheduler hands memory back; reads and runs work afterwards, and it happens again after the next run"
    )
    func afterEachQuietRun() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 30)) { backend in
            let (reports, continuation) = AsyncStream.makeStream(of: IdleMemory.Report.self)
            let settings = """
                sync:
                  interval: 1h
                probe:
                  mode: poll
                """
            try await SchedulerHarness.with(
                backend, settings: settings, releaseMemoryAfter: .milliseconds(50),
                onIdleMemoryReleased: { continuation.yield($0) }
            ) { h in
                var released = reports.makeAsyncIterator()
                let first = try #require(await released.next())
                // Not before the start-up run: it is what went quiet.
                let status = await h.engine.status
                #expect(status.lastSuccessAt != nil && status.metrics.runs == 1, "\(status.metrics.runs) runs")
                #expect(first.executableBytes > 0)
                #expect(first.residentAfter < first.residentBefore, "\(first.residentBefore) -> \(first.residentAfter)")
                // The store's readers were closed: a read opens one again.
                let orders = try await h.engine.store.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM orders")
                }
                #expect(orders == 30)

                await h.scheduler.requestRun(nil)
                let second = try #require(await released.next())
                #expect(await h.engine.status.metrics.runs == 2)
                #expect(await h.engine.status.metrics.failures == 0)
                #expect(second.residentBefore > 0)
            }
        }
    }
}

@Suite("Process memory")
struct ProcessMemoryTests {
    @Test("VmRSS, RssAnon and RssFile are read from the status text (tab-separated, in kB)")
    func parse() {
        let status =
            "Name:\trepairsyncd\nVmHWM:\t   60000 kB\nVmRSS:\t   47000 kB\nRssAnon:\t    9900 kB\nRssFile:\t   37000 kB\nRssShmem:\t       0 kB\n"
        #expect(
            ProcessMemory(status: status)
                == ProcessMemory(resident: 47000 * 1024, anonymous: 9900 * 1024, fileBacked: 37000 * 1024))
        #expect(ProcessMemory(status: "Name:\tx\nVmRSS:\t1 kB\n") == nil)
        #expect((ProcessMemory.current()?.resident ?? 0) > 0)
    }
}
