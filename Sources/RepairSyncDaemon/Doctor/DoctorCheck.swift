public import RepairSyncControl

/// One line of `repairctl doctor`: what was checked, how it went, and for a warning or a failure the fix in one
/// sentence.
public struct DoctorCheck: Sendable, Equatable {
    public enum Level: String, Sendable, Comparable {
        case ok, warn, fail, skipped

        public static func < (lhs: Level, rhs: Level) -> Bool {
            let order: [Level] = [.ok, .skipped, .warn, .fail]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
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

    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("level", .string(level.rawValue)), ("detail", .string(detail)),
            ("fix", .optionalString(fix)),
        ])
    }

    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue, let level = json["level"]?.stringValue.flatMap(Level.init(rawValue:)),
            let detail = json["detail"]?.stringValue
        else { return nil }
        self.init(name, level, detail, fix: json["fix"]?.stringValue)
    }
}
