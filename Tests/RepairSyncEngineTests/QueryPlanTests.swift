import Foundation
import GRDB
import GRDBSQLite
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Synchronization
import Testing

/// Every query the daemon runs on the store, as SQLite plans it (docs/performance.md, "A shop ten times larger").
///
/// The statements are not listed by hand: every connection the process opens to the test's store is traced
/// (`sqlite3_trace_v2`, installed by an SQLite auto-extension), while the test drives what the daemon does — a full
/// sync and an incremental one, every list and detail the control socket serves with each of its filters, the
/// status, local changes (`updateOrder`, `queueChange` after another program's edit, a ticket reply), a push, a
/// conflict and its resolution, a resync with its sweep. Each distinct statement is then planned with
/// `EXPLAIN QUERY PLAN` on the same store.
///
/// The store has no `sqlite_stat1` (the daemon never runs `ANALYZE`), so SQLite chooses its plans from the schema
/// alone, not from the number of rows: the plans of this small store are those of a store of a million orders.
@Suite("Query plans", .serialized, .timeLimit(.minutes(2)))
struct QueryPlanTests {
    /// Tables whose size follows the shop's (or the history of its changes).
    static let largeTables: Set<String> = [
        "orders", "devices", "clients", "tickets", "ticket_messages", "sync_bases", "edited_rows", "resync_marks",
        "outbox", "conflicts",
    ]

    /// Statements that read a whole table on purpose, each with why it is bounded or rare. Matched by the start of
    /// the statement's SQL.
    static let wholeTableByDesign: [(sql: String, why: String)] = [
        (
            "SELECT COUNT(*) FROM ",
            "the status's record counts: read again only for a collection that a run grew or shrank"
        ),
        (
            "INSERT OR IGNORE INTO resync_marks ",
            "a pull from the beginning (first sync, expired cursor) marks every id held, to delete those it does not bring back"
        ),
        (
            "SELECT seq, collection, record_id, order_key, kind, fields, idempotency_key, state, attempts, sent, next_attempt_at, last_error, created_at, edited_at, depends_on, blocked_by, priority FROM outbox ORDER BY seq",
            "`repairctl outbox` lists the whole outbox: local changes not yet on the server, not the shop's records"
        ),
        (
            "UPDATE outbox SET priority = ",
            "the engine's start classes every waiting change again by the configured classes: once, and the outbox, not the shop's records"
        ),
    ]

    @Test(
        "every statement the daemon runs on a large table finds its rows through an index, and lists stop at their LIMIT without sorting"
    )
    func everyQueryUsesAnIndex() async throws {
        try await EngineHarness.with(orders: 60) { h in
            let path = try #require(h.store.path)
            // Connections opened from here on (the pool's readers are opened lazily) are traced; the writer was
            // opened with the store, so a store opened again on the same file stands in for the daemon's next start.
            StatementTrace.start(path: path)
            defer { StatementTrace.stop() }
            let store = try ReplicaStore.open(at: path)
            let engine = try h.reopenedEngine(on: store)

            #expect(await engine.performFullSync().succeeded)
            let replica = engine.replica
            let order = try #require(
                try replica.orders(status: nil, clientId: nil, page: .init(limit: 50, offset: 0)).first)
            let ticket = try #require(try replica.tickets(status: nil, page: .init(limit: 50, offset: 0)).first)
            for status in [nil, order.status] {
                for clientId in [nil, order.clientId] {
                    _ = try replica.orders(status: status, clientId: clientId, page: .init(limit: 50, offset: 10))
                }
            }
            _ = try replica.order(id: order.id, number: nil, revealPasscodes: false)
            _ = try replica.order(id: nil, number: order.orderNumber, revealPasscodes: true)
            let device = try #require(
                try replica.devices(
                    orderId: nil, status: nil, page: .init(limit: 50, offset: 0), revealPasscodes: false
                ).first)
            for orderId in [nil, device.orderId] {
                for status in [nil, device.status] {
                    _ = try replica.devices(
                        orderId: orderId, status: status, page: .init(limit: 50, offset: 0), revealPasscodes: true)
                }
            }
            _ = try replica.clients(search: nil, page: .init(limit: 50, offset: 0))
            _ = try replica.clients(search: "a", page: .init(limit: 50, offset: 0))
            _ = try replica.client(id: order.clientId)
            for status in [nil, ticket.status] {
                _ = try replica.tickets(status: status, page: .init(limit: 50, offset: 0))
            }
            _ = try replica.ticket(id: ticket.id)
            _ = try replica.dashboard(period: "today")

            // Local changes: an edit through the socket, another program's edit queued, a reply to a ticket.
            _ = try await engine.update(.orders, id: order.id, fields: ["notes": "from the counter"])
            _ = try await engine.update(.devices, id: device.id, fields: ["diagnosis": "water damage"])
            try await store.write { db in
                try db.execute(sql: "UPDATE orders SET status = 'ready' WHERE id = ?", arguments: [order.id])
            }
            _ = try await engine.queueChange(.orderUpdated, id: order.id)
            _ = try await engine.createTicketMessage(ticketId: ticket.id, content: "We will call you")
            _ = try engine.pendingChangesCount()
            _ = try engine.outboxEntries()
            _ = await engine.status

            // A conflict: the server changes the same field before the push.
            try await h.serverEdit("orders", order.id, #"{"notes":"from the phone"}"#)
            _ = await engine.performFullSync()
            for conflict in try engine.conflicts(openOnly: true) {
                try await engine.resolveConflict(id: conflict.id, .keepRemote)
            }
            _ = try engine.conflicts()
            // And an ordinary incremental pull of changed records.
            try await h.serverEdit("devices", device.id, #"{"status":"repaired"}"#)
            try await h.serverEdit("clients", order.clientId, #"{"city":"Leeds"}"#)
            #expect(await engine.performFullSync().succeeded)
            // A resync (`repairctl resync devices`): every id marked, the pull from the beginning, and the sweep of a
            // device the server no longer has.
            let gone = try #require(
                try replica.devices(
                    orderId: nil, status: nil, page: .init(limit: 1, offset: 20), revealPasscodes: false
                ).first)
            try await h.serverDelete("devices", gone.id)
            #expect(await engine.resync([.devices]).succeeded)
            let left = try replica.devices(
                orderId: gone.orderId, status: nil, page: .init(limit: 50, offset: 0), revealPasscodes: false)
            #expect(left.allSatisfy { $0.id != gone.id })
            await engine.stop()

            let statements = StatementTrace.statements(path: path)
            #expect(statements.count > 30, "the trace saw too few statements: \(statements.keys.sorted())")
            var failures: [String] = []
            var planned = 0
            for (sql, expanded) in statements.sorted(by: { $0.key < $1.key }) {
                guard Self.isPlannable(sql) else { continue }
                let plan = try await store.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + expanded).map { $0["detail"] as String }
                }
                planned += 1
                if let problem = Self.problem(sql: sql, plan: plan) {
                    failures.append("\(problem)\n    \(sql.prefix(300))\n    plan: \(plan.joined(separator: " | "))")
                }
            }
            #expect(planned > 25)
            #expect(
                failures.isEmpty,
                "\(failures.count) statements read a large table without an index:\n\(failures.joined(separator: "\n"))"
            )
        }
    }

    @Test(
        "the first pull into an empty table loads it without its list indexes and builds them once, after its last record"
    )
    func bulkLoad() async throws {
        try await EngineHarness.with(orders: 100) { h in
            let directory = try TemporaryDirectory(prefix: "bulk-load")
            let path = directory.path("replica.sqlite")
            StatementTrace.start(path: path)
            defer { StatementTrace.stop() }
            let store = try ReplicaStore.open(at: path)
            let engine = try h.reopenedEngine(on: store)
            #expect(await engine.performFullSync().succeeded)

            let sequence = StatementTrace.sequence()
            for table in ["orders", "devices", "clients", "tickets"] {
                let rows = sequence.indices.filter { sequence[$0].hasPrefix("INSERT INTO \(table) ") }
                #expect(rows.count >= 2, "\(table): \(rows.count) upserts traced (pages of 40 records)")
                for index in ListIndexes.of(table) {
                    let dropped = sequence.firstIndex(of: "DROP INDEX IF EXISTS \(index.name)")
                    let built = sequence.firstIndex(of: index.sql)
                    #expect(
                        dropped != nil && built != nil,
                        "\(index.name): dropped \(String(describing: dropped)), built \(String(describing: built))")
                    if let dropped, let built, let first = rows.first, let last = rows.last {
                        #expect(dropped < first && last < built, "\(index.name): not around the load")
                    }
                    #expect(sequence.filter { $0 == index.sql }.count == 1, "\(index.name) built once")
                }
                #expect(try await store.read { db in try ListIndexes.missing(on: table, db) }.isEmpty)
            }
            // A second pull (from its cursor, into a full table) keeps them.
            let before = StatementTrace.sequence().count
            #expect(await engine.performFullSync().succeeded)
            #expect(
                !StatementTrace.sequence()[before...].contains {
                    $0.hasPrefix("DROP INDEX") || $0.hasPrefix("CREATE INDEX")
                })
        }
    }

    @Test("the check bites: a list without its index, or a lookup on an unindexed column, is reported")
    func theCheckBites() throws {
        let sorted = Self.problem(
            sql: "SELECT * FROM orders ORDER BY notes LIMIT 50",
            plan: ["SCAN orders", "USE TEMP B-TREE FOR ORDER BY"])
        #expect(sorted != nil)
        let scanned = Self.problem(sql: "SELECT * FROM devices WHERE diagnosis = 'x'", plan: ["SCAN devices"])
        #expect(scanned != nil)
        let walked = Self.problem(
            sql: "SELECT * FROM orders ORDER BY created_at DESC, order_number DESC LIMIT 50 OFFSET 0",
            plan: ["SCAN orders USING INDEX orders_created"])
        #expect(walked == nil)
        let searched = Self.problem(
            sql: "SELECT * FROM orders WHERE id = 'ord_1'",
            plan: ["SEARCH orders USING INDEX sqlite_autoindex_orders_1 (id=?)"])
        #expect(searched == nil)
    }

    /// Statements SQLite can plan that touch data (not transactions, pragmas, GRDB's schema look-ups, trigger bodies).
    static func isPlannable(_ sql: String) -> Bool {
        let head = sql.drop { $0.isWhitespace }.prefix(7).uppercased()
        guard ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "REPLACE"].contains(where: { head.hasPrefix($0) }) else {
            return false
        }
        return !sql.contains("sqlite_master") && !sql.contains("sqlite_schema") && !sql.contains("pragma_")
            && !sql.contains("grdb_migrations")
    }

    /// Why this plan reads a large table without an index, or nil. A scan in an index's (or the rowid's) order is
    /// fine for a list that stops at its LIMIT; a scan otherwise, or a sort of a large table, is not — unless the
    /// statement reads the whole table by design.
    static func problem(sql: String, plan: [String]) -> String? {
        if wholeTableByDesign.contains(where: { sql.hasPrefix($0.sql) }) { return nil }
        let limited = sql.range(of: " LIMIT ", options: .caseInsensitive) != nil
        for line in plan {
            let words = line.split(separator: " ")
            guard words.count >= 2, words[0] == "SCAN" else { continue }
            let table = String(words[1])
            guard largeTables.contains(table) else { continue }
            // A scan in an index's (or the rowid's) order that nothing sorts afterwards stops at the LIMIT.
            let sorted = plan.contains { $0.hasPrefix("USE TEMP B-TREE") }
            if !limited || sorted { return "reads all of \(table)" }
        }
        if plan.contains(where: { $0.hasPrefix("USE TEMP B-TREE FOR") }),
            plan.contains(where: { line in largeTables.contains { line.hasPrefix("SCAN \($0)") } })
        {
            return "sorts a large table"
        }
        return nil
    }
}

/// Records the statements of every SQLite connection the process opens to one file (an auto-extension installs
/// `sqlite3_trace_v2` on each new connection): SQL text → one execution with its values bound.
enum StatementTrace {
    private struct State {
        var path: String?
        var statements: [String: [String: String]] = [:]
        /// Every statement's SQL text, in the order they ran.
        var sequence: [String] = []
    }

    private static let state = Mutex(State())

    private static let traceCallback:
        @convention(c) (UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 =
            {
                _, _, statement, _ in
                guard let statement else { return 0 }
                let handle = OpaquePointer(statement)
                guard let connection = sqlite3_db_handle(handle), let file = sqlite3_db_filename(connection, "main")
                else { return 0 }
                let path = String(cString: file)
                guard state.withLock({ $0.path == path }), let text = sqlite3_sql(handle) else { return 0 }
                let sql = String(cString: text)
                var expanded = sql
                if let bound = sqlite3_expanded_sql(handle) {
                    expanded = String(cString: bound)
                    sqlite3_free(bound)
                }
                state.withLock { state in
                    if state.statements[path, default: [:]][sql] == nil {
                        state.statements[path, default: [:]][sql] = expanded
                    }
                    state.sequence.append(sql)
                }
                return 0
            }

    private static let entryPoint:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<CChar>?>?, OpaquePointer?) -> Int32 = {
            connection, _, _ in
            sqlite3_trace_v2(connection, UInt32(SQLITE_TRACE_STMT), traceCallback, nil)
            return SQLITE_OK
        }

    /// Traces connections opened from now on to `path`.
    static func start(path: String) {
        state.withLock { $0 = State(path: path) }
        sqlite3_auto_extension(unsafeBitCast(entryPoint, to: (@convention(c) () -> Void).self))
    }

    static func stop() {
        sqlite3_cancel_auto_extension(unsafeBitCast(entryPoint, to: (@convention(c) () -> Void).self))
        state.withLock { $0.path = nil }
    }

    static func statements(path: String) -> [String: String] {
        state.withLock { $0.statements[path] ?? [:] }
    }

    /// The SQL of every statement run on the traced file since `start`, in order.
    static func sequence() -> [String] {
        state.withLock { $0.sequence }
    }
}
