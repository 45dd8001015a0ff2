/// Where an order is in the shop's workflow.
public enum OrderStatus: OpenEnum {
    case bookedIn, inProgress, awaitingParts, ready, collected, cancelled
    case unrecognized(String)

    public static let known: [OrderStatus] = [.bookedIn, .inProgress, .awaitingParts, .ready, .collected, .cancelled]

    public var rawValue: String {
        switch self {
        case .bookedIn: "booked_in"
        case .inProgress: "in_progress"
        case .awaitingParts: "awaiting_parts"
        case .ready: "ready"
        case .collected: "collected"
        case .cancelled: "cancelled"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String {
        switch self {
        case .bookedIn: "Booked in"
        case .inProgress: "In progress"
        case .awaitingParts: "Awaiting parts"
        case .ready: "Ready for collection"
        case .collected: "Collected"
        case .cancelled: "Cancelled"
        case .unrecognized(let raw): Self.humanized(raw)
        }
    }

    /// True while the shop still has work or the customer's property: everything but collected and cancelled.
    /// An unknown status counts as active, so that an order is never hidden from the work list by mistake.
    public var isActive: Bool {
        switch self {
        case .collected, .cancelled: false
        default: true
        }
    }
}
