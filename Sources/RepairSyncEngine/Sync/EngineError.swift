/// Why an engine call failed, in words an admin can act on.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    /// `queueChange` or a mutation named a record the replica does not have.
    case unknownRecord(collection: String, id: String)
    /// A value the API would reject (e.g. a status this version does not know for a mutation).
    case invalidValue(field: String, reason: String)
    /// The outbox holds something this version cannot read.
    case corruptOutbox(String)
    /// No outbox entry or conflict with this id.
    case notFound(String)

    public var description: String {
        switch self {
        case .unknownRecord(let collection, let id): "no \(collection) record with id \(id) in the replica"
        case .invalidValue(let field, let reason): "invalid \(field): \(reason)"
        case .corruptOutbox(let detail): "unreadable outbox entry: \(detail)"
        case .notFound(let what): "\(what) not found"
        }
    }
}
