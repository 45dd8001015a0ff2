/// The class a local change is pushed in: when the link comes back, what a waiting customer sees goes first (an
/// order's status, a public reply), then what the bench needs (a device's status and diagnosis, bookings), then the
/// rest (notes, internal messages). Classes order changes *across* records; a record's own changes (and a ticket's
/// messages, and a new record's children) keep their order whatever their classes — a change that must go first
/// is pushed in the class of the most urgent change waiting behind it.
///
/// Declared once, here, for the engine, the control protocol (`pending` shows it) and the daemon's configuration.
public enum PushPriority: Int, Sendable, Hashable, CaseIterable, Comparable, Codable {
    case critical = 0
    case high = 1
    case normal = 2

    public var name: String {
        switch self {
        case .critical: "critical"
        case .high: "high"
        case .normal: "normal"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// What a change of `collection` is classed by: its fields (an update of an order or a device), `create` (a
    /// client, an order or a device booked in here), or `public` / `internal` (a ticket message).
    public static let subjects: [(collection: SyncCollection, subject: String)] = [
        (.orders, "status"), (.orders, "notes"), (.orders, "create"),
        (.devices, "status"), (.devices, "diagnosis"), (.devices, "resolution"), (.devices, "create"),
        (.clients, "create"),
        (.ticketMessages, "public"), (.ticketMessages, "internal"),
    ]

    /// The defaults: a waiting customer's view first, then the bench's, then the rest.
    public static func defaultPriority(_ collection: SyncCollection, _ subject: String) -> PushPriority {
        switch (collection, subject) {
        case (.orders, "status"), (.ticketMessages, "public"): .critical
        case (.devices, "status"), (.devices, "diagnosis"), (.devices, "resolution"), (_, "create"): .high
        default: .normal
        }
    }
}
