public import Foundation
public import GRDB
internal import RepairSyncModels
internal import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The local SQLite replica of the backend's records: one file, WAL mode, opened through a GRDB `DatabasePool`
/// so that any number of readers (the control socket, local tools) run beside the one writer (the sync engine).
///
/// Every commit uses `synchronous=FULL`: a commit that acknowledges a local change is on disk, power cut or not,
/// before the acknowledgement is sent. Pages of server records commit with their cursor in the same transaction.
///
/// ```swift
/// let store = try ReplicaStore.open(at: "/var/lib/repairsyncd/replica.sqlite")
/// let ready = try store.read { db in try Order.filter(sql: "status = 'ready'").fetchAll(db) }
/// ```
public final class ReplicaStore: Sendable {
    /// The database, for the engine and for tests. Tools outside the daemon open the file read-only.
    public let writer: any DatabaseWriter
    /// The file path, or nil for an in-memory store.
    public let path: String?
    /// Transactions of concurrent writers sharing one commit (`queueChange` from many clients).
    public let groupCommit: GroupCommit
    /// The WAL's checkpoints, run beside the writer rather than inside a commit (nil for an in-memory store).
    let checkpoints: BackgroundCheckpoints?
    private let isClosed = Mutex(false)
    private let gate = WriteGate()

    private init(writer: any DatabaseWriter, path: String?, checkpoints: BackgroundCheckpoints? = nil) {
        self.writer = writer
        self.path = path
        self.checkpoints = checkpoints
        groupCommit = GroupCommit(writer: writer, gate: gate)
    }

    /// Writes are refused from now on (`endWrites`), or the store is closed.
    public var isClosing: Bool { gate.isClosed || isClosed.withLock { $0 } }

    /// Runs `check` on the writer, after every write queued before it, and if it returns, ends writing for good:
    /// every later write throws `StoreClosing`. So what `check` counts (a purge's changes not yet on the server) is
    /// everything that was ever acknowledged; if it throws, writing goes on.
    public func endWrites<T: Sendable>(after check: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try gate.check()
        return try await writer.writeWithoutTransaction { db in
            try self.gate.check()
            let result = try check(db)
            self.gate.close()
            return result
        }
    }

    /// Opens the replica at `path`, creating it (mode 0600, or `fileMode`) and migrating it to the current schema.
    ///
    /// - Throws: `StoreError` when the file cannot be created or is not a database this version can migrate.
    public static func open(at path: String, fileMode: UInt32 = 0o600) throws -> ReplicaStore {
        try createIfMissing(path: path, mode: fileMode)
        try refuseForeign(at: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool: DatabasePool
        let checkpoints: BackgroundCheckpoints
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // GRDB sets synchronous=NORMAL on the writer when it enables WAL (after `prepareDatabase`), which may
            // lose the last commits on a power cut. Only the writer connection commits, so FULL is set there; and
            // its commits leave the WAL's checkpoints to a connection beside it.
            checkpoints = try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                return BackgroundCheckpoints.install(on: db, path: path)
            }
        } catch {
            throw isCorruption(error)
                ? StoreError.corrupt(path: path, reason: "\(error)")
                : StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        try migrate(pool, path: path)
        return ReplicaStore(writer: pool, path: path, checkpoints: checkpoints)
    }

    /// Throws `StoreError.foreign` when the file at `path` is another program's database — tables, and no record of a
    /// replica's migrations — read without writing: opening it as the store would turn it to WAL and add the
    /// replica's tables to it. (An empty or unreadable file goes on to the open, which makes or judges it.)
    static func refuseForeign(at path: String) throws {
        guard let queue = try? readOnly(at: path),
            let objects = try? queue.read({ db -> [String] in
                guard try !db.tableExists("grdb_migrations") else { return [] }
                return try String.fetchAll(
                    db,
                    sql: "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 5")
            })
        else { return }
        try? queue.close()
        if !objects.isEmpty { throw StoreError.foreign(path: path, objects: objects) }
    }

    /// Moves a file that is not a sound database out of the way — with its WAL and shared-memory files, under
    /// `<name>.corrupt-<UTC time>` next to it, never overwritten — so a fresh replica can be made while the old
    /// bytes stay for whoever wants to recover a change from them. Returns the new path of the database file.
    public static func keepAside(at path: String, now: Date = Date()) throws -> String {
        // Through a symbolic link, the file itself goes aside beside it, and the link stays: the fresh store is made
        // where the link leads (moving the link put the fresh store on another disk, and left the damaged one).
        let path = symbolicLinkTarget(of: path) ?? path
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var kept = path + keptAsideMark + formatter.string(from: now)
        var counter = 1
        while FileManager.default.fileExists(atPath: kept) {
            counter += 1
            kept = path + keptAsideMark + formatter.string(from: now) + "-\(counter)"
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: kept + suffix)
        }
        return kept
    }

    /// A damaged store kept aside beside the store at `path` (`keepAside`), and how many local changes were waiting
    /// in its outbox, read without writing to it (nil when that cannot be read).
    public struct KeptAside: Sendable, Hashable {
        public var path: String
        public var unsentChanges: Int?
    }

    /// The damaged stores kept aside beside the store at `path`, oldest first.
    public static func keptAside(beside path: String) -> [KeptAside] {
        let path = symbolicLinkTarget(of: path) ?? path
        let prefix = (path as NSString).lastPathComponent + keptAsideMark
        return filesBeside(path).filter {
            $0.name.hasPrefix(prefix) && !$0.name.hasSuffix("-wal") && !$0.name.hasSuffix("-shm")
        }.map {
            let kept = $0.path
            let count = try? readOnly(at: kept).read { db in
                // Not through an index: a damaged index is a common reason the file was kept aside.
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox NOT INDEXED")
            }
            return KeptAside(path: kept, unsentChanges: count ?? nil)
        }
    }

    /// Whether `error` is SQLite saying the file is damaged or not a database.
    public static func isCorruption(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    }

    /// A private in-memory store, migrated: for tests and tools that need scratch space.
    public static func inMemory() throws -> ReplicaStore {
        let queue = try DatabaseQueue()
        try migrate(queue, path: ":memory:")
        return ReplicaStore(writer: queue, path: nil)
    }

    /// A consistent copy of the whole store at `path` (SQLite's online backup: readers and the writer go on), mode
    /// 0600. Returns the copy's `PRAGMA integrity_check` problems (empty when sound).
    public func backup(to path: String) throws -> [String] {
        try Self.createIfMissing(path: path, mode: 0o600)
        let destination = try DatabaseQueue(path: path)
        try writer.backup(to: destination)
        let problems = try destination.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
        }
        try destination.close()
        return problems
    }

    /// Frees SQLite's page caches and compiled statements: the readers are closed (a later read opens one again) and
    /// the writer's cache emptied, after whatever the writer is doing. For a daemon going to sleep after a run.
    public func releaseMemory() async {
        guard let pool = writer as? DatabasePool else { return }
        pool.releaseMemoryEventually()
        // The writer is serial: once this runs, its release (queued just above) has too.
        _ = try? await pool.writeWithoutTransaction { _ in }
    }

    /// Closes the database: for a wipe (`purge`), and at a clean stop — the last connection's close checkpoints the
    /// WAL into the database file and removes it, so that the file alone is the whole replica (a copy made after
    /// `systemctl stop` holds everything). Reads and writes fail afterwards; closing again does nothing.
    public func close() throws {
        let first = isClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard let pool = writer as? DatabasePool, first else { return }
        // The checkpoints' connection first: none may open the file again once it is gone.
        pool.writeWithoutTransaction { db in checkpoints?.uninstall(from: db) }
        checkpoints?.close()
        // The readers first (GRDB closes the writer before them): the last connection to close checkpoints the WAL
        // and removes it, and a reader, opened read-only, cannot.
        pool.releaseMemory()
        try pool.close()
    }

    /// The database file and its WAL on disk, in bytes: two `stat` calls (every status a subscriber is sent carries
    /// it; FileManager's attributes would also look the owner up in the user and group databases each time).
    public static func bytesOnDisk(at path: String) -> Int64 {
        [path, path + "-wal"].reduce(0) { total, file in
            var info = stat()
            return total + (stat(file, &info) == 0 ? Int64(info.st_size) : 0)
        }
    }

    /// Deletes the database file and its WAL, shared-memory, journal and lock files, and the copies of it left
    /// beside it (backups' copies, damaged stores kept aside: each holds the shop's records); returns the paths
    /// removed.
    public static func removeFiles(at path: String) -> [String] {
        var removed: [String] = []
        // A store reached through a symbolic link lives at the link's target (SQLite opens it there and keeps its WAL
        // beside it): its files go first, then the link — removing only the link left the shop's records on disk.
        if let target = symbolicLinkTarget(of: path) { removed += removeFiles(at: target) }
        for file in [path, path + "-wal", path + "-shm", path + "-journal", path + ".lock"] where unlink(file) == 0 {
            removed.append(file)
        }
        return removed + removeCopies(of: path, keptAside: true)
    }

    /// The file a symbolic link at `path` leads to, every link on the way followed; nil when `path` is no link.
    static func symbolicLinkTarget(of path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else {
            return nil
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Where a backup makes its copy of the store at `path`: beside it, named after it, removed once sent.
    public static func backupCopyPath(for path: String) -> String {
        path + ".backup-" + UUID().uuidString.lowercased()
    }

    /// Deletes the copies of the store at `path` beside it: the backups' (those of a daemon killed while it sent
    /// one, never removed; `backup-UUID.sqlite` from before they were named after the store), and with
    /// `keptAside` the damaged stores kept aside. Returns the paths removed.
    @discardableResult
    public static func removeCopies(of path: String, keptAside: Bool) -> [String] {
        let name = (path as NSString).lastPathComponent
        var removed: [String] = []
        for file in filesBeside(path) {
            let ours =
                file.name.hasPrefix(name + ".backup-")
                || (keptAside && file.name.hasPrefix(name + keptAsideMark))
                || file.name.wholeMatch(
                    of: /backup-[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\.sqlite(-journal)?/)
                    != nil
            if ours, unlink(file.path) == 0 { removed.append(file.path) }
        }
        return removed
    }

    /// A connection to the file at `path` that never writes: no migration, no journal mode set, nothing created.
    public static func readOnly(at path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// What `keepAside` puts between the store's name and the time.
    static let keptAsideMark = ".corrupt-"

    /// The files in the directory of the store at `path`, by name, sorted.
    private static func filesBeside(_ path: String) -> [(name: String, path: String)] {
        let directory = (path as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        return names.sorted().map { ($0, (directory as NSString).appendingPathComponent($0)) }
    }

    /// Sets the mode of the database and its WAL and shared-memory files (e.g. 0640 for local tools in the group).
    public static func setMode(_ mode: UInt32, at path: String) {
        for file in [path, path + "-wal", path + "-shm"] { chmod(file, mode_t(mode)) }
    }

    /// The names of the migrations the file has, in the order they are applied (not sorted: `v10` follows `v9`).
    public func appliedMigrations() throws -> [String] {
        let migrator = ReplicaMigrations.migrator
        let applied = try writer.read { db in try migrator.appliedIdentifiers(db) }
        return migrator.migrations.filter(applied.contains)
    }

    public func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws -> T {
        try writer.read(body)
    }

    public func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws -> T {
        try gate.check()
        return try writer.write { db in
            try self.gate.check()
            return try body(db)
        }
    }

    /// Reads in a connection of the pool, giving the connection back as soon as `body` is done — on the connection's
    /// own queue, before the caller is resumed. (GRDB's async `read` gives it back only once the caller's task runs
    /// again: with every thread of Swift's cooperative pool blocked in a synchronous read, waiting for a connection,
    /// and every connection held by an async read waiting for one of those threads, nothing would run again.)
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            writer.asyncRead { database in
                continuation.resume(with: Result { try body(try database.get()) })
            }
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try gate.check()
        return try await writer.write { db in
            try self.gate.check()
            return try body(db)
        }
    }

    /// Runs `PRAGMA integrity_check` and returns its problems (empty when the file is sound).
    public func integrityProblems() throws -> [String] {
        try writer.read { db in
            let lines = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            return lines == ["ok"] ? [] : lines
        }
    }

    private static func migrate(_ writer: some DatabaseWriter, path: String) throws {
        do {
            let migrator = ReplicaMigrations.migrator
            if try writer.read({ try migrator.hasBeenSuperseded($0) }) {
                throw StoreError.newerSchema(path: path)
            }
            try migrator.migrate(writer)
        } catch let error as StoreError {
            throw error
        } catch {
            throw isCorruption(error)
                ? StoreError.corrupt(path: path, reason: "\(error)")
                : StoreError.cannotMigrate(path: path, reason: "\(error)")
        }
    }

    private static func createIfMissing(path: String, mode: UInt32) throws {
        let fd = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw StoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        Glibc.close(fd)
    }
}
