/// The state of a support ticket.
public enum TicketStatus: OpenEnum {
    case open, pending, closed
    case unrecognized(String)

    public static let known: [TicketStatus] = [.open, .pending, .closed]

    public var rawValue: String {
        switch self {
        case .open: "open"
        case .pending: "pending"
        case .closed: "closed"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String {
        switch self {
        case .open: "Open"
        case .pending: "Pending"
        case .closed: "Closed"
        case .unrecognized(let raw): Self.humanized(raw)
        }
    }

    /// Open and pending tickets need attention; closed ones do not. An unknown status counts as active.
    public var isActive: Bool { self != .closed }
}
