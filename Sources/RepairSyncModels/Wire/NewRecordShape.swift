/// `POST /api/v1/clients`, `/orders`, `/devices` (docs/api.md section 4.7): the keys a create body may carry
/// besides its client-generated `id`, which of them are required, and which names the record's parent. Every other
/// key of the record (`order_number`, `client_name`, `device_count`, totals, counts, times, `version`) is the
/// server's to set.
public struct NewRecordShape: Sendable, Hashable {
    /// The parent a new record names: an order's client, a device's order.
    public struct Parent: Sendable, Hashable {
        public var field: String
        public var collection: SyncCollection
    }

    public var collection: SyncCollection
    /// Every key the body may carry besides `id` (all strings or null; money as decimal text).
    public var fields: [String]
    /// Keys that must be present and not blank.
    public var required: [String]
    public var parent: Parent?
    /// Keys holding money (docs/api.md section 2.3).
    public var money: [String]

    /// The longest text a record's field or a message may hold (docs/api.md sections 4.4, 4.6, 4.7): a longer one
    /// is refused here, at once, rather than by the server later as a dead change.
    public static let maximumTextLength = 10_000

    /// Whether `text` is longer than `maximumTextLength` characters, counted as Unicode code points (as the API
    /// counts them: a "\r\n" is two, an emoji made of several code points is several).
    public static func isTooLong(_ text: String) -> Bool { text.unicodeScalars.count > maximumTextLength }

    public static let client = NewRecordShape(
        collection: .clients,
        fields: ["email", "first_name", "last_name", "phone", "company", "address", "city", "postcode", "notes"],
        required: ["email"], parent: nil, money: [])

    public static let order = NewRecordShape(
        collection: .orders, fields: ["client_id", "status", "notes", "deposit", "location_id", "assigned_user_id"],
        required: ["client_id"], parent: Parent(field: "client_id", collection: .clients), money: ["deposit"])

    public static let device = NewRecordShape(
        collection: .devices,
        fields: [
            "order_id", "type", "brand", "model", "serial", "imei", "passcode", "status", "issue", "diagnosis",
            "resolution", "price", "assigned_user_id",
        ],
        required: ["order_id", "type"], parent: Parent(field: "order_id", collection: .orders), money: ["price"])

    /// The shape of a collection the API creates records of (clients, orders, devices); nil for the others (a
    /// ticket message has its own endpoint, docs/api.md section 4.5).
    public static func of(_ collection: SyncCollection) -> NewRecordShape? {
        switch collection {
        case .clients: client
        case .orders: order
        case .devices: device
        case .tickets, .ticketMessages: nil
        }
    }

    /// 8-4-4-4-12 hexadecimal digits (ASCII): what the API takes as a client-generated id (records and messages
    /// alike).
    public static func isClientId(_ id: String) -> Bool {
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isHexDigit } }
    }

    /// An id this client gives a record or a message it creates: a client id (`isClientId`) in lowercase. The
    /// contract does not say that a server keeps an id's letter case, and one that stores UUIDs as such (a
    /// PostgreSQL `uuid` column) answers and announces them in lowercase: an id sent in capitals would come back as
    /// another record's — its answer not believed, its feed copy a second row beside the first.
    public static func isNewId(_ id: String) -> Bool {
        isClientId(id) && !id.contains { $0.isUppercase }
    }

    /// Why `id` cannot name a new record or message, for an `invalidValue` on `id`.
    public static func newIdProblem(_ id: String) -> String {
        isClientId(id)
            ? "a new id is a UUID in lowercase (\(id.lowercased())): a server may keep UUIDs in lowercase only"
            : "a new id is a UUID (8-4-4-4-12 hexadecimal digits), not \(id)"
    }
}
