/// Who wrote a ticket message.
public enum SenderType: OpenEnum {
    case staff, client
    case unrecognized(String)

    public static let known: [SenderType] = [.staff, .client]

    public var rawValue: String {
        switch self {
        case .staff: "staff"
        case .client: "client"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String {
        switch self {
        case .staff: "Staff"
        case .client: "Client"
        case .unrecognized(let raw): Self.humanized(raw)
        }
    }
}
