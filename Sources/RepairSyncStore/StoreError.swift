/// Why the replica could not be opened or used, in words an admin can act on.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    private enum Kind: Sendable {
        case cannotOpen(path: String, reason: String)
        case cannotMigrate(path: String, reason: String)
        case newerSchema(path: String)
        case corrupt(path: String, reason: String)
        case locked(path: String, pid: Int32?)
        case foreign(path: String, objects: [String])
    }

    private let kind: Kind

    public static func cannotOpen(path: String, reason: String) -> StoreError {
        StoreError(kind: .cannotOpen(path: path, reason: reason))
    }

    public static func cannotMigrate(path: String, reason: String) -> StoreError {
        StoreError(kind: .cannotMigrate(path: path, reason: reason))
    }

    public static func newerSchema(path: String) -> StoreError {
        StoreError(kind: .newerSchema(path: path))
    }

    /// The file is not a sound SQLite database (garbage bytes, a damaged page).
    public static func corrupt(path: String, reason: String) -> StoreError {
        StoreError(kind: .corrupt(path: path, reason: reason))
    }

    /// Another process holds the store's lock (`StoreLock`).
    public static func locked(path: String, pid: Int32?) -> StoreError {
        StoreError(kind: .locked(path: path, pid: pid))
    }

    /// The file is another program's SQLite database (it has tables, and none of a replica's migrations): it is
    /// left as it was.
    public static func foreign(path: String, objects: [String]) -> StoreError {
        StoreError(kind: .foreign(path: path, objects: objects))
    }

    /// `store.path` names another program's database: a configuration mistake, not a damaged store.
    public var isForeign: Bool {
        if case .foreign = kind { return true }
        return false
    }

    public var isLocked: Bool {
        if case .locked = kind { return true }
        return false
    }

    public var isCorrupt: Bool {
        if case .corrupt = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .cannotOpen(let path, let reason):
            "cannot open the store \(path): \(reason)"
        case .cannotMigrate(let path, let reason):
            "cannot migrate the store \(path) (is it a repairsyncd replica?): \(reason)"
        case .corrupt(let path, let reason):
            "the store \(path) is not a sound database: \(reason)"
        case .locked(let path, let pid):
            "the store \(path) is in use by another process\(pid.map { " (pid \($0))" } ?? ""): one repairsyncd per store; stop it first"
        case .foreign(let path, let objects):
            "store.path: \(path) is another program's SQLite database (it holds \(objects.joined(separator: ", "))), not a repairsyncd replica; it was left as it was — point store.path at a file of its own"
        case .newerSchema(let path):
            "the store \(path) was written by a newer repairsyncd; install that version or restore a backup"
        }
    }
}
