import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairAPIDev
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Pulls over compressed answers, as the daemon's HTTP client makes them (`TransportSettings.makeHTTPClient()`), and
/// hostile or broken compressed answers refused without harm.
@Suite("Compression")
struct CompressionTests {
    /// An engine whose HTTP client inflates answers (the daemon's), against `backend`.
    static func engine(
        _ backend: RunningBackend, _ directory: TemporaryDirectory, events: EngineEvents = EngineEvents()
    ) throws -> (SyncEngine, ReplicaStore) {
        let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
        let api = APIClient(
            configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token), clock: SystemEngineClock(),
            transport: HTTPTransport(baseURL: backend.baseURL, http: HTTPTransport.defaultHTTPClient))
        return (
            try SyncEngine(store: store, api: api, configuration: EngineConfiguration(pageSize: 200), events: events),
            store
        )
    }

    static func count(_ store: ReplicaStore, _ table: String) throws -> Int {
        try store.read { (db: Database) in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
    }

    static func counters(_ backend: RunningBackend) async throws -> [String: Any] {
        try await backend.get("/admin/counters").object()
    }

    @Test("an initial sync over gzip: every record arrives, in a fraction of the bytes")
    func initialSyncCompressed() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 300)) { backend in
            let directory = try TemporaryDirectory(prefix: "compression")
            let (engine, store) = try Self.engine(backend, directory)
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report)")
            let server = try await Self.counters(backend)
            let records = try #require(server["records"] as? [String: Int])
            for collection in SyncCollection.allCases {
                #expect(try Self.count(store, collection.name) == records[collection.name], "\(collection)")
            }
            let sent = try #require(server["response_body_bytes"] as? Int)
            let unencoded = try #require(server["response_body_bytes_unencoded"] as? Int)
            #expect(try #require(server["compressed_responses"] as? Int) > 0)
            #expect(sent * 4 < unencoded, "sent \(sent) bytes for \(unencoded)")
            // The client counts the same bytes on the wire (the Content-Length of each compressed answer).
            #expect(engine.api.link.bytesReceived == Int64(sent))
        }
    }

    @Test(
        "a gzip bomb, also when asked for uncompressed, is that collection's named error: nothing of it committed, the others pull, the next run heals"
    )
    func bomb() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 40)) { backend in
            let directory = try TemporaryDirectory(prefix: "compression")
            let (engine, store) = try Self.engine(backend, directory)
            // Twice: the page, and the same page asked for again uncompressed (a bomb is sent whatever is accepted).
            let queued = try await backend.send(
                .POST, "/admin/faults/next",
                json: #"{"kind":"gzip_bomb","path_prefix":"/api/v1/orders/changes","count":2}"#)
            #expect(queued.status == 200)
            let report = await engine.performFullSync()
            #expect(!report.succeeded)
            let error = try #require(report.failedCollections["orders"])
            #expect(error.contains("inflates to more than 100 times its size"), "\(error)")
            #expect(error.contains("compression bomb"), "\(error)")
            #expect(try Self.count(store, "orders") == 0)
            let cursor = try await store.read { db in
                try String.fetchOne(db, sql: "SELECT cursor FROM sync_metadata WHERE collection = 'orders'")
            }
            #expect(cursor == nil)
            let status = await engine.status
            #expect(
                status.collections.first { $0.collection == .orders }?.lastError?.contains("compression bomb") == true)
            #expect(try Self.count(store, "clients") == 20)
            #expect(try Self.count(store, "tickets") == 20)
            #expect((try await Self.counters(backend)["faults_injected"] as? [String: Int])?["gzip_bomb"] == 2)

            let again = await engine.performFullSync()
            #expect(again.succeeded, "\(again)")
            #expect(try Self.count(store, "orders") == 40)
        }
    }

    @Test(
        "an answer that inflates past the limit is asked for once more uncompressed: a page that compresses too well does not hold its collection back"
    )
    func inflatesTooFarThenPlain() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 40)) { backend in
            let directory = try TemporaryDirectory(prefix: "compression")
            let (engine, store) = try Self.engine(backend, directory)
            _ = try await backend.send(
                .POST, "/admin/faults/next", json: #"{"kind":"gzip_bomb","path_prefix":"/api/v1/orders/changes"}"#)
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report)")
            #expect((try await Self.counters(backend)["faults_injected"] as? [String: Int])?["gzip_bomb"] == 1)
            #expect(try Self.count(store, "orders") == 40)
        }
    }

    @Test("a corrupt gzip body is that collection's named error, and nothing of it is committed")
    func corrupt() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 20)) { backend in
            let directory = try TemporaryDirectory(prefix: "compression")
            let (engine, store) = try Self.engine(backend, directory)
            _ = try await backend.send(
                .POST, "/admin/faults/next", json: #"{"kind":"corrupt_gzip","path_prefix":"/api/v1/clients/changes"}"#)
            let report = await engine.performFullSync()
            let error = try #require(report.failedCollections["clients"])
            #expect(error.contains("compressed body is corrupt"), "\(error)")
            #expect(try Self.count(store, "clients") == 0)
            #expect(try Self.count(store, "orders") == 20)
        }
    }
}
