internal import Foundation
internal import GRDB
internal import Logging
internal import RepairAPIDev
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncStore

/// The two files every power cut starts from, and what the pull between them must look like.
///
/// A shop is seeded and fully synced into a replica (the template replica); then the server changes — other users
/// edit orders, devices, clients and tickets, and delete a device, a client and a message — and that server is the
/// template backend. The workload pulls those changes page by page. The pages are computed here once, from the
/// template replica's cursors, so that after a cut the replica can be compared with exactly the pages up to its
/// stored cursor. Local changes touch other records (`queued`, `updatedOrders`, `updatedDevices`) than the server's,
/// so the pages and the acknowledgements are judged independently.
struct PowerCutShop: Sendable {
    let replicaTemplate: String
    let backendTemplate: String
    /// Per collection: the template replica's cursor, and the pages that follow it.
    let pulls: [String: Pull]
    /// Per table: id → version in the template replica.
    let templateVersions: [String: [String: Int]]
    let queued: [String]
    let updatedOrders: [String]
    let updatedDevices: [String]

    struct Page: Sendable {
        var nextCursor: String
        var records: [(id: String, version: Int)]
        var deleted: [String]
    }

    struct Pull: Sendable {
        var fromCursor: String?
        var pages: [Page]
    }

    static func make(in workspace: Workspace, orders: Int, pageSize: Int) async throws -> PowerCutShop {
        let backendTemplate = workspace.file("backend-template.sqlite")
        let replicaTemplate = workspace.file("replica-template.sqlite")
        let seeded = try DevBackend(
            options: .init(databasePath: backendTemplate, tokens: [PowerCut.token: "Another Technician"], admin: true),
            logger: PowerCutServer.quietLogger)
        try seeded.seed(SeedOptions(orders: orders, seedValue: 20))
        let server = try await PowerCutServer.start(seeded)

        // The replica as a daemon left it after a full sync.
        let store = try ReplicaStore.open(at: replicaTemplate)
        let engine = try SyncEngine(
            store: store,
            api: APIClient(
                configuration: .init(baseURL: server.baseURL, token: PowerCut.token), link: PowerCut.fixedPages()),
            configuration: EngineConfiguration(pageSize: 200, completedHold: .zero), logger: PowerCutServer.quietLogger)
        let synced = await engine.performFullSync()
        guard synced.succeeded else { throw ScenarioFailure("the template replica did not sync: \(synced.stop ?? "")") }
        let cursors = try await store.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT collection, cursor FROM sync_metadata").map {
                    ($0["collection"] as String, $0["cursor"] as String?)
                })
        }
        try store.close()
        let templateVersions = try StoreInspector.versions(replicaTemplate)

        // Other users change the server: about a third of each collection, and three deletions of leaf records
        // (a parent's deletion would take its children in the replica before their own page).
        let admin = server.admin
        let devices = orders + orders / 2
        let clients = max(1, orders / 2)
        let tickets = max(1, orders / 2)
        for n in 1...(orders * 2 / 5) {
            try await admin.edit("orders", "ord_\(n)", ["notes": "changed on the server \(n)"])
        }
        for n in 1...(devices * 2 / 5) {
            try await admin.edit("devices", "dev_\(n)", ["diagnosis": "checked on the server \(n)"])
        }
        for n in 1...(clients * 3 / 5) { try await admin.edit("clients", "cli_\(n)", ["notes": "called back \(n)"]) }
        for n in 1...(tickets * 2 / 5) {
            try await admin.edit("tickets", "tkt_\(n)", ["subject": "changed subject \(n)"])
        }
        let message =
            try await admin.allRecords("ticket_messages").values
            .first { $0["ticket_id"] as? String == "tkt_\(tickets)" }?["id"] as? String
        for path in ["devices/dev_\(devices)", "clients/cli_\(clients)"]
            + (message.map { ["ticket_messages/\($0)"] } ?? [])
        {
            let reply = try await admin.send("DELETE", "/admin/records/\(path)")
            guard reply.status == 200 else { throw ScenarioFailure("admin delete \(path): HTTP \(reply.status)") }
        }

        var pulls: [String: Pull] = [:]
        for table in StoreInspector.tables {
            let from = cursors[table] ?? nil
            pulls[table] = Pull(fromCursor: from, pages: try await Self.pages(table, from: from, size: pageSize, admin))
        }
        await server.stop()

        // Local changes go to the other records: half of the remaining orders through queueChange, half through
        // updateOrder, and devices past the server's through updateDevice.
        let firstLocal = orders / 2 + 1
        let localOrders = (firstLocal...orders).map { "ord_\($0)" }
        let firstDevice = devices * 4 / 5
        return PowerCutShop(
            replicaTemplate: replicaTemplate, backendTemplate: backendTemplate, pulls: pulls,
            templateVersions: templateVersions, queued: Array(localOrders.prefix(localOrders.count / 2)),
            updatedOrders: Array(localOrders.dropFirst(localOrders.count / 2)),
            updatedDevices: (firstDevice..<devices).map { "dev_\($0)" })
    }

    /// The feed of `table` after `cursor`, page by page, as the workload's pull will see it.
    static func pages(_ table: String, from cursor: String?, size: Int, _ admin: AdminAPI) async throws -> [Page] {
        var pages: [Page] = []
        var cursor = cursor
        while true {
            let query = "limit=\(size)" + (cursor.map { "&cursor=\($0)" } ?? "")
            let reply = try await admin.send("GET", "/api/v1/\(table)/changes?\(query)")
            guard reply.status == 200 else { throw ScenarioFailure("\(table) feed: HTTP \(reply.status)") }
            let page = try reply.object()
            let records = (page["data"] as? [[String: Any]] ?? []).compactMap { record -> (String, Int)? in
                guard let id = record["id"] as? String, let version = record["version"] as? Int else { return nil }
                return (id, version)
            }
            let deleted = (page["deleted"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            guard let next = page["next_cursor"] as? String else {
                throw ScenarioFailure("\(table) feed: no next_cursor")
            }
            if !records.isEmpty || !deleted.isEmpty || next != cursor {
                pages.append(
                    Page(nextCursor: next, records: records.map { (id: $0.0, version: $0.1) }, deleted: deleted))
            }
            cursor = next
            guard page["has_more"] as? Bool == true else { return pages }
        }
    }

    func copyReplica(to path: String) throws {
        try FileManager.default.copyItem(atPath: replicaTemplate, toPath: path)
    }

    /// A server on a fresh copy of the template backend.
    func startServer(copyingTo path: String) async throws -> PowerCutServer {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: backendTemplate + suffix) {
            try FileManager.default.copyItem(atPath: backendTemplate + suffix, toPath: path + suffix)
        }
        let backend = try DevBackend(
            options: .init(databasePath: path, tokens: [PowerCut.token: "Another Technician"], admin: true),
            logger: PowerCutServer.quietLogger)
        return try await PowerCutServer.start(backend)
    }

    /// Where the replica is not exactly "the pages up to its cursor": a cursor that is no page boundary, a record of
    /// an applied page at another version (or a deleted one still there), a record of a page not applied that
    /// moved past its template version (or went).
    func pageMismatches(_ store: ReplicaStore) throws -> [String] {
        let (cursors, versions) = try store.read { db in
            (
                try Dictionary(
                    uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT collection, cursor FROM sync_metadata").map {
                        ($0["collection"] as String, $0["cursor"] as String?)
                    }),
                try Dictionary(
                    uniqueKeysWithValues: StoreInspector.tables.map { table in
                        (
                            table,
                            try Dictionary(
                                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, version FROM \(table)").map {
                                    ($0["id"] as String, $0["version"] as Int)
                                })
                        )
                    })
            )
        }
        var mismatches: [String] = []
        for table in StoreInspector.tables {
            guard let pull = pulls[table] else { continue }
            let stored = cursors[table] ?? nil
            let applied: Int
            if stored == pull.fromCursor {
                applied = 0
            } else if let index = pull.pages.firstIndex(where: { $0.nextCursor == stored }) {
                applied = index + 1
            } else {
                mismatches.append("\(table): the stored cursor is no page boundary of the pull")
                continue
            }
            let local = versions[table] ?? [:]
            let template = templateVersions[table] ?? [:]
            for (number, page) in pull.pages.enumerated() {
                let isApplied = number < applied
                for record in page.records {
                    let expected = isApplied ? record.version : template[record.id]
                    if local[record.id] != expected {
                        mismatches.append(
                            "\(table) page \(number + 1) (\(isApplied ? "before" : "after") the cursor, \(applied) applied): \(record.id) at version \(local[record.id].map(String.init) ?? "missing"), expected \(expected.map(String.init) ?? "missing")"
                        )
                    }
                }
                for id in page.deleted {
                    let expected = isApplied ? nil : template[id]
                    if local[id] != expected {
                        mismatches.append(
                            "\(table) page \(number + 1) (\(isApplied ? "before" : "after") the cursor): deleted \(id) is \(local[id] == nil ? "missing" : "still there")"
                        )
                    }
                }
            }
        }
        return mismatches
    }
}

/// The development backend in this process, on its own file and a free port.
final class PowerCutServer: Sendable {
    let backend: DevBackend
    let baseURL: String
    let task: Task<Void, any Error>
    var admin: AdminAPI { AdminAPI(baseURL: baseURL, token: PowerCut.token) }

    static var quietLogger: Logger {
        var logger = Logger(label: "power-cut")
        logger.logLevel = .critical
        return logger
    }

    private init(backend: DevBackend, baseURL: String, task: Task<Void, any Error>) {
        self.backend = backend
        self.baseURL = baseURL
        self.task = task
    }

    static func start(_ backend: DevBackend) async throws -> PowerCutServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            defer { continuation.finish() }
            try await backend.run { port in continuation.yield(port) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            throw ScenarioFailure("the development backend did not start: \(String(describing: await task.result))")
        }
        return PowerCutServer(backend: backend, baseURL: "http://127.0.0.1:\(port)", task: task)
    }

    func stop() async {
        await backend.shutdown()
        _ = await task.result
    }

    /// The server's current value of each acknowledged field (`collection/id/field` → text, nil when empty).
    func values(for acknowledged: [Acknowledgement]) async throws -> [String: String] {
        var values: [String: String] = [:]
        for collection in Set(acknowledged.map(\.collection)) {
            let records = try await admin.allRecords(collection)
            for ack in acknowledged where ack.collection == collection {
                values[ack.key] = records[ack.id]?[ack.field] as? String
            }
        }
        return values
    }
}
