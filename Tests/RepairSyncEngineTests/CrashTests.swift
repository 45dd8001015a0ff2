import BackendTestSupport
import Foundation
import GRDB
import RepairSyncEngine
import RepairSyncModels
import RepairSyncProcesses
import RepairSyncStore
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The engine in a real child process killed with SIGKILL at chosen points — while a change is being sent, after
/// the server accepted it and before the acknowledgement was committed, between pages of a pull — then restarted
/// until it finishes. Nothing may be lost, nothing duplicated, and the store must stay intact.
@Suite("Crash recovery", .timeLimit(.minutes(3)))
struct CrashTests {
    @Test(
        "killed during push at 12 points, restarted each time: every change on the server exactly once",
        arguments: RunningBackend.Scheme.allCases)
    func crashDuringPush(scheme: RunningBackend.Scheme) async throws {
        try await EngineHarness.with(orders: 30, scheme: scheme) { h in
            #expect(await h.engine.performFullSync().succeeded)
            var expectedNotes: [String: String] = [:]
            for n in 1...30 {
                try await h.engine.update(.orders, id: "ord_\(n)", fields: ["notes": "crash test \(n)"])
                expectedNotes["ord_\(n)"] = "crash test \(n)"
            }
            for n in 1...15 {
                try await h.engine.update(.devices, id: "dev_\(n)", fields: ["diagnosis": "crash diagnosis \(n)"])
            }
            var messageIds: [String] = []
            for n in 1...20 {
                let ticket = "tkt_\(n % 15 + 1)"
                messageIds.append(
                    try await h.engine.createTicketMessage(ticketId: ticket, content: "crash message \(n)").id)
            }
            let before = try await h.counters()

            // Where to die, in order: each run makes progress and then dies at its point.
            let points = [
                "accepted:1", "sending:2", "accepted:3", "pushed:2", "accepted:2", "sending:1", "accepted:5",
                "pushed:4", "accepted:1", "accepted:4", "sending:3", "accepted:2",
            ]
            var killed = 0
            var acceptedKills = 0
            for point in points {
                let run = try await Helper.run(h, ["--mode", "push", "--kill-on", point])
                if run.killed {
                    killed += 1
                    if point.hasPrefix("accepted") { acceptedKills += 1 }
                }
            }
            #expect(killed == points.count, "every run died where it was told (65 changes are enough)")
            let final = try await Helper.run(h, ["--mode", "full"])
            #expect(final.exitCode == 0, "\(final.lines.suffix(3))")

            // Nothing lost.
            #expect(try h.engine.pendingChangesCount() == 0)
            #expect(try h.engine.outboxEntries().isEmpty)
            for (id, notes) in expectedNotes {
                #expect(try await h.serverRecord(Order.self, "orders", id).notes == notes, "\(id)")
                #expect(try h.local(Order.self, id)?.notes == notes, "\(id)")
            }
            for n in 1...15 {
                #expect(
                    try await h.serverRecord(Device.self, "devices", "dev_\(n)").diagnosis == "crash diagnosis \(n)")
            }
            for id in messageIds {
                #expect(try await h.backend.get("/api/v1/ticket_messages/\(id)").status == 200)
            }
            // Nothing duplicated: one applied PATCH per change, one message per message; replays answered the rest.
            let after = try await h.counters()
            func delta(_ name: String) -> Int { (after[name] as? Int ?? 0) - (before[name] as? Int ?? 0) }
            #expect(delta("patches_applied") == 45)
            #expect(delta("messages_created") == 20)
            #expect(delta("idempotent_replays") >= acceptedKills, "each kill after acceptance was replayed")
            #expect(try h.strings("PRAGMA integrity_check") == ["ok"])
        }
    }

    @Test("killed during a large initial pull, restarted each time: only a page not yet committed is fetched again")
    func crashDuringPull() async throws {
        try await EngineHarness.with(orders: 200) { h in
            // A reference run on its own store: how many pages an uninterrupted initial sync fetches.
            let reference = try await Helper.run(
                h, ["--mode", "full", "--page-size", "50"], store: h.directory.path("reference.sqlite"))
            #expect(reference.exitCode == 0)
            let recordsNeeded = reference.recordsApplied
            #expect(reference.count("page-received") >= 20)

            let points = [
                "page-received:3", "page-applied:2", "page-received:1", "page-applied:4", "page-received:5",
                "page-applied:1", "page-received:2", "page-applied:3",
            ]
            var applied = 0
            var fetched = 0
            var killed = 0
            var killedBeforeCommit = 0
            for point in points {
                let run = try await Helper.run(h, ["--mode", "full", "--page-size", "50", "--kill-on", point])
                applied += run.recordsApplied
                fetched += run.recordsFetched
                if run.killed {
                    killed += 1
                    if point.hasPrefix("page-received") { killedBeforeCommit += 1 }
                }
            }
            let final = try await Helper.run(h, ["--mode", "full", "--page-size", "50"])
            #expect(final.exitCode == 0, "\(final.lines.suffix(3))")
            applied += final.recordsApplied
            fetched += final.recordsFetched

            #expect(killed == points.count)
            // A page whose transaction committed (killed at page-applied) is never fetched again; one killed before
            // its commit is fetched once more. Collections already caught up cost one empty page per restart.
            #expect(applied == recordsNeeded, "a committed page was applied again")
            let fetchedAgain = fetched - recordsNeeded
            #expect(fetchedAgain >= 0)
            #expect(
                fetchedAgain <= 50 * killedBeforeCommit,
                "\(fetchedAgain) records fetched again after \(killedBeforeCommit) kills before a commit")
            let server = try await h.serverCounts()
            for collection in SyncCollection.allCases {
                #expect(try h.localCount(collection.name) == server[collection.name], "\(collection)")
            }
            let remote = try await h.serverRecord(Order.self, "orders", "ord_200")
            #expect(try h.local(Order.self, "ord_200")?.version == remote.version)
            #expect(try h.strings("PRAGMA integrity_check") == ["ok"])
        }
    }
}

/// The `repairsync-test-helper` executable, run to completion or death; its output goes to a file (a pipe could
/// fill up and stall it) and its exit is awaited through the termination handler (no thread blocks on it).
struct Helper {
    let lines: [String]
    let exitCode: Int32
    let killed: Bool

    func count(_ event: String) -> Int { lines.filter { $0.hasPrefix(event + " ") || $0 == event }.count }

    /// Records of the pages whose transaction committed (`page-applied COLLECTION RECORDS DELETED MORE`).
    var recordsApplied: Int { sum("page-applied") }
    /// Records of the pages that arrived, committed or not (`page-received COLLECTION RECORDS DELETED`).
    var recordsFetched: Int { sum("page-received") }

    private func sum(_ event: String) -> Int {
        lines.filter { $0.hasPrefix(event + " ") }.reduce(0) { sum, line in
            sum + (Int(line.split(separator: " ")[2]) ?? 0)
        }
    }

    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("repairsync-test-helper")
    }

    static func run(_ h: EngineHarness, _ arguments: [String], store: String? = nil) async throws -> Helper {
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path), "build the helper: \(executable.path)")
        let arguments =
            [
                executable.path, "--store", store ?? h.directory.path("replica.sqlite"), "--api", h.backend.baseURL,
                "--token", RunningBackend.token,
            ] + (h.backend.caFile.map { ["--ca-file", $0] } ?? []) + arguments
        let (status, text) = try await ChildProcess.run(
            arguments, logPath: h.directory.path("helper-\(UUID().uuidString.prefix(8)).err"), timeout: 300)
        let lines = text.split(separator: "\n").map(String.init)
        return Helper(lines: lines, exitCode: status, killed: status == 128 + SIGKILL)
    }
}
