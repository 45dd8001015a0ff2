public import RepairSyncModels

/// One line of a doctor report: what was checked, how it went, and for a warning or a failure the fix in one
/// sentence.
public struct DoctorCheck: Codable, Sendable, Hashable {
    public enum Level: OpenEnum, Comparable {
        case ok, warn, fail, skipped
        case unrecognized(String)

        public static let known: [Level] = [.ok, .warn, .fail, .skipped]

        public var rawValue: String {
            switch self {
            case .ok: "ok"
            case .warn: "warn"
            case .fail: "fail"
            case .skipped: "skipped"
            case .unrecognized(let raw): raw
            }
        }

        public var displayName: String { rawValue }

        /// ok < skipped < warn < fail (an unknown level counts as a warning).
        var severity: Int {
            switch self {
            case .ok: 0
            case .skipped: 1
            case .warn, .unrecognized: 2
            case .fail: 3
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.severity < rhs.severity }
    }

    public var name: String
    public var level: Level
    public var detail: String
    public var fix: String?

    public init(_ name: String, _ level: Level, _ detail: String, fix: String? = nil) {
        self.name = name
        self.level = level
        self.detail = detail
        self.fix = fix
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(level, forKey: .level)
        try c.encode(detail, forKey: .detail)
        try c.encode(fix, forKey: .fix)
    }
}
