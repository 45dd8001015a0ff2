public import RepairSyncModels

/// One entry of the conflict audit log: what both sides had, how it was resolved, by which policy.
public struct ConflictEntry: Codable, Sendable, Hashable {
    /// `resolveConflict` takes it.
    public var id: Int64
    public var collection: String
    public var recordId: String
    /// The fields in conflict.
    public var fields: [String]
    /// The last server copy before the conflict, the local values, the new server copy (by field name).
    public var base: [String: String?]
    public var local: [String: String?]
    public var remote: [String: String?]
    public var remoteVersion: Int?
    public var policy: String
    public var outcome: ConflictOutcome
    /// Waiting for a decision.
    public var open: Bool
    public var detectedAt: Timestamp
    public var resolvedAt: Timestamp?

    public init(
        id: Int64, collection: String, recordId: String, fields: [String], base: [String: String?],
        local: [String: String?], remote: [String: String?], remoteVersion: Int?, policy: String,
        outcome: ConflictOutcome, open: Bool, detectedAt: Timestamp, resolvedAt: Timestamp?
    ) {
        self.id = id
        self.collection = collection
        self.recordId = recordId
        self.fields = fields
        self.base = base
        self.local = local
        self.remote = remote
        self.remoteVersion = remoteVersion
        self.policy = policy
        self.outcome = outcome
        self.open = open
        self.detectedAt = detectedAt
        self.resolvedAt = resolvedAt
    }
}

/// A decision on an open conflict: keep every local value, every remote one, or choose per field.
public enum ConflictChoice: Codable, Sendable, Hashable {
    public enum Side: String, Codable, Sendable, Hashable, CaseIterable {
        case local, remote
    }

    case keepLocal
    case keepRemote
    /// Fields not named keep local.
    case perField([String: Side])

    /// `"local"`, `"remote"`, or `{"field": "local" | "remote"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let side = try? container.decode(String.self) {
            switch side {
            case "local": self = .keepLocal
            case "remote": self = .keepRemote
            default: throw Self.refusal(decoder)
            }
            return
        }
        guard let fields = try? container.decode([String: String].self) else { throw Self.refusal(decoder) }
        var choices: [String: Side] = [:]
        for (field, side) in fields {
            guard let choice = Side(rawValue: side) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath,
                        debugDescription: #"field \#(field) must be "local" or "remote""#))
            }
            choices[field] = choice
        }
        self = .perField(choices)
    }

    static func refusal(_ decoder: any Decoder) -> DecodingError {
        .dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: #"must be "local", "remote" or {"field": "local"|"remote"}"#))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .keepLocal: try container.encode("local")
        case .keepRemote: try container.encode("remote")
        case .perField(let choices): try container.encode(choices)
        }
    }
}
