/// Where a device is in its repair.
public enum DeviceStatus: OpenEnum {
    case bookedIn, diagnosing, awaitingApproval, approved, inRepair, awaitingParts, repaired, qualityCheck, ready
    case collected, unrepairable
    case unrecognized(String)

    public static let known: [DeviceStatus] = [
        .bookedIn, .diagnosing, .awaitingApproval, .approved, .inRepair, .awaitingParts, .repaired, .qualityCheck,
        .ready, .collected, .unrepairable,
    ]

    public var rawValue: String {
        switch self {
        case .bookedIn: "booked_in"
        case .diagnosing: "diagnosing"
        case .awaitingApproval: "awaiting_approval"
        case .approved: "approved"
        case .inRepair: "in_repair"
        case .awaitingParts: "awaiting_parts"
        case .repaired: "repaired"
        case .qualityCheck: "quality_check"
        case .ready: "ready"
        case .collected: "collected"
        case .unrepairable: "unrepairable"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String {
        switch self {
        case .bookedIn: "Booked in"
        case .diagnosing: "Diagnosing"
        case .awaitingApproval: "Awaiting approval"
        case .approved: "Approved"
        case .inRepair: "In repair"
        case .awaitingParts: "Awaiting parts"
        case .repaired: "Repaired"
        case .qualityCheck: "Quality check"
        case .ready: "Ready for collection"
        case .collected: "Collected"
        case .unrepairable: "Unrepairable"
        case .unrecognized(let raw): Self.humanized(raw)
        }
    }

    /// True until the device has left the shop (collected). An unrepairable device is still active: it waits to
    /// be collected. An unknown status counts as active.
    public var isActive: Bool {
        self != .collected
    }
}
