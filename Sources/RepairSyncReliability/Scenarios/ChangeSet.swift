internal import RepairSyncControlClient
public import RepairSyncProtocol

/// A batch of local changes made through the socket — order notes, device diagnoses and new ticket messages, each
/// on a record of its own so every change is exactly one write on the server — and what the server must hold
/// once they are pushed.
public struct ChangeSet: Sendable {
    public struct Change: Sendable {
        public var method: String
        public var params: JSONValue
        /// The collection and record whose field must end up with `value` (for a message: its content).
        public var collection: String
        public var recordId: String
        public var field: String
        public var value: String
    }

    public var changes: [Change]
    public var updates: Int { changes.filter { $0.method != "replyToTicket" }.count }
    public var messages: Int { changes.count - updates }

    /// How many orders the server must be seeded with for `count` changes.
    public static func ordersNeeded(for count: Int) -> Int { max(20, count * 2 / 5 + 10) }

    /// `count` changes: 35 % order notes, 35 % device diagnoses, 30 % ticket messages; values carry `tag`.
    public init(count: Int, tag: String) {
        let orders = count * 35 / 100
        let devices = count * 35 / 100
        let messages = count - orders - devices
        let tickets = Self.ordersNeeded(for: count) / 2
        changes = (0..<orders).map { index in
            let n = index + 1
            let value = "\(tag) note \(n)"
            return Change(
                method: "updateOrder", params: .object(["id": .string("ord_\(n)"), "notes": .string(value)]),
                collection: "orders", recordId: "ord_\(n)", field: "notes", value: value)
        }
        changes += (0..<devices).map { index in
            let n = index + 1
            let value = "\(tag) diagnosis \(n)"
            return Change(
                method: "updateDevice", params: .object(["id": .string("dev_\(n)"), "diagnosis": .string(value)]),
                collection: "devices", recordId: "dev_\(n)", field: "diagnosis", value: value)
        }
        changes += (0..<messages).map { index in
            let n = index + 1
            let value = "\(tag) message \(n)"
            let ticket = "tkt_\((n - 1) % tickets + 1)"
            return Change(
                method: "replyToTicket", params: .object(["ticketId": .string(ticket), "content": .string(value)]),
                collection: "ticket_messages", recordId: "", field: "content", value: value)
        }
    }

    /// Makes every change over one connection; each reply means the change is on disk. Messages learn their ids.
    public mutating func apply(to daemon: DaemonProcess) async throws {
        let path = daemon.socketPath
        let changes = self.changes
        self.changes = try await Blocking.run {
            let client = try ControlClient(path: path)
            return try changes.map { change in
                var change = change
                let result = try client.call(change.method, change.params)
                if change.method == "replyToTicket" { change.recordId = result["id"]?.stringValue ?? "" }
                return change
            }
        }
    }

    public struct Outcome: Sendable {
        /// Changes whose value is not on the server.
        public var lost: Int
        /// Messages of this set present more than once on the server (by content).
        public var duplicatedMessages: Int
        public var examples: [String]
    }

    /// Compares with what the server holds now.
    public func verify(on server: AdminAPI) async throws -> Outcome {
        var lost = 0
        var examples: [String] = []
        var records: [String: [String: [String: Any]]] = [:]
        for collection in Set(changes.map(\.collection)) {
            records[collection] = try await server.allRecords(collection)
        }
        var contents: [String: Int] = [:]
        for message in records["ticket_messages"]?.values ?? [:].values {
            if let content = message["content"] as? String { contents[content, default: 0] += 1 }
        }
        for change in changes {
            let present = records[change.collection]?[change.recordId]?[change.field] as? String == change.value
            if !present {
                lost += 1
                if examples.count < 5 {
                    examples.append("lost: \(change.collection)/\(change.recordId) \(change.field)=\(change.value)")
                }
            }
        }
        let duplicated = changes.filter { $0.method == "replyToTicket" }.reduce(0) {
            $0 + max(0, (contents[$1.value] ?? 0) - 1)
        }
        return Outcome(lost: lost, duplicatedMessages: duplicated, examples: examples)
    }
}
