import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one sync of the engine in its own process, printing every engine event as a line, and can kill itself with
/// SIGKILL at a chosen event — for the crash tests, which need a real process to die at a precise point (for
/// example after the server accepted a change and before the acknowledgement was committed).
@main
struct EngineRunner: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsync-test-helper",
        abstract: "Run one engine sync in a process a crash test can kill (not installed; tests only).")

    @Option(help: "The SQLite store.") var store: String
    @Option(help: "The API base URL.") var api: String
    @Option(help: "The API token.") var token: String
    @Option(help: "A CA certificate (PEM) to trust besides the system's, as api.ca_file.") var caFile: String?
    @Option(help: "Records per changes page.") var pageSize = 500
    @Option(help: "full (push then pull everything) or push (push only).") var mode = "full"
    @Option(help: "Changes in flight at once (1: one after another, as the simulator runs the engine).")
    var pushConcurrency = 8
    @Flag(help: "Do not fetch the next page while one is applied.") var noPullAhead = false
    @Option(
        help: """
            Die with SIGKILL at the Nth event of a kind: sending:N, accepted:N, pushed:N, page-received:N, \
            page-applied:N.
            """)
    var killOn: String?

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let target = try killOn.map(Self.parseKill)
        let counts = Mutex<[String: Int]>([:])
        let events = EngineEvents { event in
            let (name, line) = Self.describe(event)
            Self.emit(line)
            let count = counts.withLock { counts in
                counts[name, default: 0] += 1
                return counts[name]!
            }
            if let target, target.name == name, target.count == count {
                Self.emit("killing at \(name):\(count)")
                kill(getpid(), SIGKILL)
            }
        }
        let lock = try StoreLock.acquire(forStoreAt: store)
        defer { withExtendedLifetime(lock) {} }
        let replica = try ReplicaStore.open(at: store)
        let settings = TransportSettings(caFile: caFile)
        let http = try settings.makeHTTPClient()
        let client = APIClient(
            configuration: .init(baseURL: api, token: token), clock: SystemEngineClock(),
            transport: HTTPTransport(baseURL: api, http: http, settings: settings))
        let engine = try SyncEngine(
            store: replica, api: client,
            configuration: EngineConfiguration(
                pageSize: pageSize, completedHold: .zero, pushConcurrency: pushConcurrency, pullAhead: !noPullAhead),
            events: events)
        let report = mode == "push" ? await engine.sync([]) : await engine.performFullSync()
        try await http.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Self.emit("finished " + String(decoding: try encoder.encode(report), as: UTF8.self))
        if !report.succeeded { throw ExitCode(1) }
    }

    static func parseKill(_ text: String) throws -> (name: String, count: Int) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let count = Int(parts[1]), count > 0 else {
            throw ValidationError("--kill-on takes EVENT:N, e.g. accepted:3")
        }
        return (String(parts[0]), count)
    }

    static func describe(_ event: EngineEvent) -> (String, String) {
        switch event {
        case .sending(let seq, let collection, let id): ("sending", "sending \(seq) \(collection.name) \(id)")
        case .accepted(let seq, let collection, let id): ("accepted", "accepted \(seq) \(collection.name) \(id)")
        case .pushed(let seq, let collection, let id): ("pushed", "pushed \(seq) \(collection.name) \(id)")
        case .pageReceived(let collection, let records, let deleted):
            ("page-received", "page-received \(collection.name) \(records) \(deleted)")
        case .pageApplied(let collection, let records, let deleted, let more):
            ("page-applied", "page-applied \(collection.name) \(records) \(deleted) \(more)")
        case .cursorReset(let collection): ("cursor-reset", "cursor-reset \(collection.name)")
        case .runFinished: ("run-finished", "run-finished")
        }
    }

    /// One line, written at once (unbuffered), so that it is out before a SIGKILL.
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
