import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairAPIDev
import RepairSyncControlClient
import RepairSyncModels
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every `repairctl` command, its table and its `--json`, against a daemon whose store is seeded the same way every
/// time (a fixed seed and a fixed "now" for the backend's records), compared with the files in Golden/ after
/// `GoldenTranscript` replaced what depends on the clock or the machine. Output goes through pipes: no colour.
@Suite("repairctl golden output", .serialized, .timeLimit(.minutes(5)))
struct RepairctlGoldenTests {
    /// The records' times end 800 days ago: no dashboard period or comparison window reaches them, whatever the
    /// date the test runs on, so the figures stay the same (tables show times relative to now, normalized).
    static let seed = SeedOptions(
        orders: 6, seedValue: 18, anchor: Timestamp.now().adding(milliseconds: -800 * 86_400_000))

    final class Session: @unchecked Sendable {
        let h: DaemonHarness
        var transcripts: [(name: String, transcript: GoldenTranscript)] = []

        init(_ h: DaemonHarness) { self.h = h }

        /// Runs each command line and adds it to the transcript `name`.
        func record(_ name: String, _ commands: [[String]]) async throws {
            var transcript = GoldenTranscript(directory: h.directory.url.path)
            for command in commands { transcript.add(command, try await h.repairctl(command)) }
            transcripts.append((name, transcript))
        }

        /// Waits until the daemon is idle with `pending` changes not yet pushed (automatic runs are paused).
        func settle(pending: Int? = nil) async throws {
            let watcher = try StatusWatcher(path: h.socketPath)
            let settled = await watcher.wait(timeout: 20) { status in
                status["state"] == .string("idle") && (pending.map { status["pending"] == .number($0) } ?? true)
            }
            #expect(settled != nil, "the daemon did not settle: \(watcher.statuses.last?.serialized ?? "no status")")
        }

        func syncAndSettle() async throws {
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            try await settle()
        }

        /// The seq of the outbox change of `record`.
        func seq(of record: String) async throws -> Int {
            guard case .array(let changes) = try await h.call("pending"),
                let seq = changes.first(where: { $0["recordId"] == .string(record) })?["seq"]?.intValue
            else { throw ControlClient.Failure.protocolError("no change of \(record)") }
            return seq
        }

        /// Another program's write in the replica (as docs/integration.md describes it).
        func write(_ sql: String) throws {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let queue = try DatabaseQueue(path: h.storePath, configuration: configuration)
            try queue.write { db in try db.execute(sql: sql) }
            try queue.close()
        }
    }

    @Test("every command's table and --json output")
    func everyCommand() async throws {
        try await RunningBackend.with(seed: Self.seed) { backend in
            let h = try DaemonHarness(backend: backend)
            defer {
                h.kill(SIGKILL)
                h.notify.close()
            }
            h.environment = ["REPAIRSYNCD_CONFLICTS_ORDERS": "manual"]
            try await h.start()
            let s = Session(h)
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            try await s.settle(pending: 0)

            // Reading.
            try await s.record(
                "status", [["status"], ["status", "--json"], ["status", "--badge"], ["ping"], ["ping", "--json"]])
            try await s.record(
                "orders", [["orders"], ["orders", "--json"], ["orders", "--status", "ready", "--limit", "2"]])
            try await s.record("order-show", [["order", "show", "#1001"], ["order", "show", "ord_2", "--json"]])
            try await s.record("devices", [["devices", "--order", "ord_1"], ["devices", "--limit", "3", "--json"]])
            try await s.record("clients", [["clients"], ["clients", "Lovelace", "--json"]])
            try await s.record("tickets", [["tickets"], ["tickets", "--limit", "2", "--json"]])
            try await s.record("ticket-show", [["ticket", "show", "tkt_1"], ["ticket", "show", "tkt_2", "--json"]])
            try await s.record("dashboard", [["dashboard"], ["dashboard", "--period", "month", "--json"]])
            try await s.record("stats", [["stats"], ["stats", "--json"]])
            try await s.record("doctor", [["doctor"], ["doctor", "--json"]])

            // Local changes, both ways.
            try s.write("UPDATE orders SET notes = 'Written by the counter app' WHERE id = 'ord_3'")
            try await s.record(
                "order",
                [
                    ["order", "set-status", "ord_1", "ready"],
                    ["order", "set-status", "ord_2", "in_progress", "--json"],
                    ["order", "note", "ord_1", "Ready on Friday"],
                    ["order", "note", "ord_2", "Waiting for parts", "--json"],
                ])
            try await s.record(
                "device",
                [
                    ["device", "update", "dev_1", "--diagnosis", "Cracked screen"],
                    ["device", "update", "dev_2", "--status", "diagnosing", "--json"],
                ])
            try await s.record(
                "ticket-reply",
                [
                    [
                        "ticket", "reply", "tkt_1", "Your repair is ready", "--id",
                        "00000000-0000-4000-8000-000000000001",
                    ],
                    [
                        "ticket", "reply", "tkt_2", "Part ordered", "--internal", "--id",
                        "00000000-0000-4000-8000-000000000002", "--json",
                    ],
                ])
            // Several ids: one batch; each answered on its own line (already queued, nothing to queue, unknown: exit 1).
            try await s.record(
                "queue",
                [
                    ["queue", "order-updated", "ord_3"], ["queue", "order-updated", "ord_4", "--json"],
                    ["queue", "order-updated", "ord_3", "ord_4", "ord_missing"],
                    ["queue", "order-updated", "ord_3", "ord_missing", "--json"],
                ])
            try await s.record("pending", [["pending"], ["pending", "--json"]])
            try await s.record("sync", [["sync", "--wait"], ["sync", "orders", "--json"]])
            try await s.settle(pending: 0)

            // Changes the server refuses: dead, retried, discarded.
            try s.write("UPDATE orders SET status = 'teleported' WHERE id = 'ord_4'")
            try s.write("UPDATE orders SET status = 'vanished' WHERE id = 'ord_5'")
            _ = try await h.call("queueChange", .object(["kind": .string("order-updated"), "id": .string("ord_4")]))
            _ = try await h.call("queueChange", .object(["kind": .string("order-updated"), "id": .string("ord_5")]))
            try await s.syncAndSettle()
            let (dead4, dead5) = (try await s.seq(of: "ord_4"), try await s.seq(of: "ord_5"))
            try await s.record("pending-failed", [["pending", "--failed"], ["pending", "--failed", "--json"]])
            try await s.record("retry", [["retry", String(dead4)]])
            try await s.syncAndSettle()
            try await s.record("discard", [["discard", String(dead4)], ["discard", String(dead5), "--json"]])
            try await s.record("retry-none", [["retry", "--json"]])

            // Conflicts (orders are `manual` here): a local and a server edit of the same field.
            // One at a time: pushes run concurrently, so two conflicts found in one run could take either id.
            for id in ["ord_1", "ord_6"] {
                _ = try await h.call("updateOrder", .object(["id": .string(id), "notes": .string("local: \(id)")]))
                let edit = try await backend.send(
                    .PATCH, "/admin/records/orders/\(id)", json: #"{"notes":"server: \#(id)"}"#)
                #expect(edit.status == 200)
                try await s.syncAndSettle()
            }
            guard case .array(let open) = try await h.call("conflicts", .object(["open": .bool(true)])), open.count == 2
            else {
                Issue.record("two conflicts were expected: \(try await h.call("conflicts").serialized)")
                return
            }
            let conflict = { (id: String) in open.first { $0["recordId"] == .string(id) }?["id"]?.intValue ?? 0 }
            try await s.record("conflicts", [["conflicts"], ["conflicts", "--all", "--json"]])
            try await s.record(
                "resolve",
                [
                    ["resolve", String(conflict("ord_6")), "--keep", "local"],
                    ["resolve", String(conflict("ord_1")), "--keep", "remote", "--json"],
                ])
            try await s.syncAndSettle()

            // Booking in (ids chosen, so that a device's id is the only one the daemon makes), then pushed; and
            // collections pulled again from the beginning, the booked-in records among them.
            let (client, order) = ("00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-00000000a001")
            try await s.record(
                "client-new",
                [
                    [
                        "client", "new", "--email", "grace@example.com", "--first-name", "Grace", "--last-name",
                        "Hopper", "--client-id", client,
                    ],
                    [
                        "client", "new", "--email", "alan@example.com", "--last-name", "Turing", "--city", "Wilmslow",
                        "--client-id", "00000000-0000-4000-8000-00000000c002", "--json",
                    ],
                ])
            try await s.record(
                "order-new",
                [
                    [
                        "order", "new", "--client", client, "--notes", "Booked at the counter", "--deposit", "20",
                        "--device", "type=phone,brand=Apple,model=iPhone 13,issue=Cracked screen,price=89.50", "--id",
                        order,
                    ],
                    [
                        "order", "new", "--new-client", "--email", "ada@example.org", "--first-name", "Ada",
                        "--client-id", "00000000-0000-4000-8000-00000000c003", "--id",
                        "00000000-0000-4000-8000-00000000a002",
                        "--device", "type=laptop,brand=Lenovo,id=00000000-0000-4000-8000-00000000d001", "--json",
                    ],
                ])
            try await s.record(
                "device-new",
                [
                    [
                        "device", "new", "--order", order, "--type", "tablet", "--brand", "Samsung", "--issue",
                        "No power",
                        "--id", "00000000-0000-4000-8000-00000000d002",
                    ],
                    [
                        "device", "new", "--order", "ord_2", "--type", "console", "--model", "Switch", "--price", "45",
                        "--id", "00000000-0000-4000-8000-00000000d003", "--json",
                    ],
                ])
            try await s.syncAndSettle()
            try await s.record(
                "resync", [["resync", "orders", "--wait"], ["resync", "clients", "devices", "--wait", "--json"]])
            try await s.settle(pending: 0)

            // The daemon itself.
            try await s.record(
                "pause-resume-reload",
                [
                    ["pause"], ["resume", "--json"], ["pause", "--json"], ["resume"], ["reload"], ["reload", "--json"],
                ])
            _ = try await h.call("pause")
            try await s.record(
                "backup",
                [
                    ["backup", h.directory.path("copy-1.sqlite")],
                    ["backup", h.directory.path("copy-2.sqlite"), "--json"],
                ])
            try await s.settle()
            try await s.record("watch", [])
            var watch = s.transcripts.removeLast().transcript
            for arguments in [["watch"], ["watch", "--json"], ["watch", "--badge"]] {
                watch.add(arguments, try await Self.firstLine(of: arguments, h))
            }
            s.transcripts.append(("watch", watch))

            _ = try await h.call(
                "updateOrder", .object(["id": .string("ord_3"), "notes": .string("not on the server")]))
            try await s.record("purge", [["purge"], ["purge", "--force", "--json"]])
            #expect(await h.waitForExit() == 0)
            // The READY=1s of the reloads above are still queued: consume them, so the restart waits for its own.
            _ = await h.notify.wait(for: "READY=1", timeout: 0.1)
            try await h.start()
            _ = try await h.call("pause")
            try await s.settle(pending: 0)
            try await s.record("purge-table", [["purge", "--force"]])
            #expect(await h.waitForExit() == 0)

            for (name, transcript) in s.transcripts { try Golden.check(transcript.text, named: "repairctl/" + name) }
            // Every command repairctl's help lists, subcommands of subcommands included, appears in a transcript.
            let commands = try await Self.commandsInHelp()
            #expect(
                commands.isSuperset(of: ["status", "order new", "order show", "ticket reply"]),
                "the help was read: \(commands)")
            let lines = s.transcripts.flatMap { $0.transcript.text.split(separator: "\n") }.filter {
                $0.hasPrefix("$ repairctl ")
            }
            let uncovered = commands.filter { command in
                !lines.contains { $0 == "$ repairctl \(command)" || $0.hasPrefix("$ repairctl \(command) ") }
            }
            #expect(uncovered.isEmpty, "commands without a golden transcript: \(uncovered.sorted())")
        }
    }

    /// Every command line `repairctl --help` offers, read from the built binary's help: a command's name, or for one
    /// with subcommands (`order`) each of theirs (`order new`), at any depth.
    static func commandsInHelp(_ prefix: [String] = []) async throws -> Set<String> {
        let help = try await RepairctlBinaryTests.run(
            prefix + ["--help"], environment: ["COLUMNS": "100", "PATH": "/usr/bin:/bin"])
        let subcommands = RepairctlBinaryTests.subcommands(of: help.stdout)
        if subcommands.isEmpty { return prefix.isEmpty ? [] : [prefix.joined(separator: " ")] }
        var commands: Set<String> = []
        for subcommand in subcommands { commands.formUnion(try await commandsInHelp(prefix + subcommand)) }
        return commands
    }

    /// The first line `repairctl watch …` prints, then the process is stopped (it runs until interrupted).
    static func firstLine(of arguments: [String], _ h: DaemonHarness) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let watch = try ChildProcess(
            [DaemonHarness.binaries.appendingPathComponent("repairctl").path] + arguments,
            environment: ["REPAIRSYNCD_SOCKET": h.socketPath],
            logPath: h.directory.path("watch-\(arguments.count).log"),
            pipeOutput: true, mergeErrors: false)
        defer { watch.signal(SIGKILL) }
        let lines = await watch.readLines(until: { _ in true })
        return (0, (lines.first ?? "") + "\n", "")
    }
}
