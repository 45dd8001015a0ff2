import AsyncHTTPClient
import BackendTestSupport
import Logging
import RepairAPIDev
import RepairSyncDaemon
import Synchronization
import Testing

/// What the change-stream client tells an admin when the server refuses its token: said once, at warning, then
/// quietly at each retry (the engine's runs report the 401 as well) — not a warning a minute in the journal.
@Suite("Event stream: a refused token")
struct EventStreamRefusalLogTests {
    @Test("a stream refused with 401 logs one warning naming the token, then info at each retry")
    func refusedTokenWarnsOnce() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 1)) { backend in
            let captured = CapturedLog()
            let client = EventStreamClient(
                settings: PushStack.fastSettings, http: HTTPClient.shared, baseURL: backend.baseURL,
                token: "a-token-the-server-never-issued",
                logger: Logger(label: "test.events") { _ in captured }, notify: { _ in })
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await PushStack.waitUntil("four refused attempts", timeout: .seconds(60)) {
                    client.snapshot.attempts >= 4 && captured.entries.count >= 4
                }
            }
            let entries = captured.entries
            let warnings = entries.filter { $0.level == .warning }
            #expect(warnings.count == 1, "\(entries)")
            #expect(warnings.first?.message.contains("token") == true, "\(entries)")
            #expect(entries.first?.level == .warning, "the first refusal is the one that warns: \(entries)")
            #expect(
                entries.dropFirst().allSatisfy { $0.level == .info && $0.message.contains("refused") }, "\(entries)")
            #expect(
                !entries.contains {
                    $0.message.contains("a-token-the-server-never-issued")
                        || $0.metadata.contains("a-token-the-server-never-issued")
                })
        }
    }
}

/// A log handler that keeps what it is given.
final class CapturedLog: LogHandler, Sendable {
    struct Entry: Sendable, CustomStringConvertible {
        var level: Logger.Level
        var message: String
        var metadata: String
        var description: String { "\(level): \(message) \(metadata)" }
    }

    private let state = Mutex<[Entry]>([])
    var entries: [Entry] { state.withLock { $0 } }

    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let entry = Entry(level: event.level, message: "\(event.message)", metadata: "\(event.metadata ?? [:])")
        state.withLock { $0.append(entry) }
    }
}
