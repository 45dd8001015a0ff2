import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncProtocol
import RepairSyncReliability
import Testing

/// The change stream through the built `repairsyncd` process (its own HTTP client, configuration and status) and
/// `repairctl`, against repair-api-dev on loopback.
@Suite("Server push: the daemon process", .timeLimit(.minutes(3)))
struct ServerPushDaemonTests {
    @Test("repairsyncd opens the stream, pulls a server edit, and status and repairctl say connected, then unavailable")
    func daemonStatus() async throws {
        try await DaemonHarness.with { h in
            try h.writeConfig(events: true)
            try await h.start()
            try await Self.waitForStatus(h, "events connected") { $0["events"]?.stringValue == "connected" }
            let status = try await h.call("status")
            #expect(status["eventsSince"]?.stringValue != nil)
            let table = try await h.repairctl(["status"])
            #expect(table.stdout.contains("; server push connected"), "\(table.stdout)")

            // An edit at another workstation: in the replica without a periodic run (15 min).
            let edit = try await h.backend.send(
                .PATCH, "/admin/records/orders/ord_2", json: #"{"notes": "bench says ready"}"#)
            #expect(edit.status == 200)
            var configuration = Configuration()
            configuration.readonly = true
            let replica = try DatabaseQueue(path: h.storePath, configuration: configuration)
            try await PushStack.waitUntil("the edit in the daemon's replica", timeout: .seconds(30)) {
                try await replica.read { db in
                    try String.fetchOne(db, sql: "SELECT notes FROM orders WHERE id = 'ord_2'")
                } == "bench says ready"
            }
            try replica.close()

            // The server stops offering the stream: the daemon sees 404 on its reconnect and says so — to a
            // subscriber too, at once, although no run happens (the notification comes from the stream's state).
            let watcher = try StatusWatcher(path: h.socketPath)
            #expect(await watcher.wait(timeout: 30) { $0["events"]?.stringValue == "connected" } != nil)
            _ = try await h.backend.send(.PUT, "/admin/events", json: #"{"mode": "off"}"#)
            let notified = await watcher.wait(timeout: 30) { $0["events"]?.stringValue == "unavailable" }
            #expect(
                notified != nil,
                "no statusChanged with events unavailable: \(watcher.statuses.map { $0["events"] ?? .null })")
            try await Self.waitForStatus(h, "events unavailable") { $0["events"]?.stringValue == "unavailable" }
            let fallback = try await h.repairctl(["status"])
            #expect(fallback.stdout.contains("; no server push (periodic sync only)"), "\(fallback.stdout)")
        }
    }

    static func waitForStatus(
        _ h: DaemonHarness, _ what: String, _ condition: @escaping @Sendable (JSONValue) -> Bool
    ) async throws {
        try await PushStack.waitUntil(what, timeout: .seconds(30)) { condition(try await h.call("status")) }
    }
}
