internal import GRDB

/// Why the store refused a read or a write, in words for the caller — so that nothing outside the engine needs to
/// know SQLite's result codes.
public enum StoreFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The filesystem holding the store is full: nothing was changed, what was acknowledged before is kept.
    case diskFull
    /// SQLite refused (busy, read-only, I/O…), with its message.
    case refused(String)
    /// The store holds something this version cannot read.
    case unreadable(String)

    /// The failure `error` describes, when it comes from the store (nil for any other error).
    public static func classify(_ error: any Error) -> StoreFailure? {
        if let failure = error as? StoreFailure { return failure }
        guard let error = error as? DatabaseError else { return nil }
        if error.resultCode == .SQLITE_FULL { return .diskFull }
        return .refused(error.message ?? "\(error.resultCode)")
    }

    public var description: String {
        switch self {
        case .diskFull:
            "the disk holding the store is full: nothing was changed (what was acknowledged before is kept); free some space and try again"
        case .refused(let message): "the store refused: \(message)"
        case .unreadable(let what): "the store holds something this version cannot read: \(what)"
        }
    }
}
