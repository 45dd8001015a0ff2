internal import Dispatch
internal import GRDB
internal import GRDBSQLite
internal import Synchronization

/// WAL checkpoints off the commit path.
///
/// By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages (`wal_autocheckpoint`): that
/// commit copies the WAL back into the database file and syncs it before it returns. A queued change writes about
/// eight pages, so one `queueChange` in 120 paid for a checkpoint — two to three times the others' time, and all of
/// the call's p99 (docs/performance.md). Here the writer's WAL hook only looks at the WAL's size after each commit;
/// past `threshold` it asks a connection of its own, on a thread of its own, for a PASSIVE checkpoint — which never
/// waits for the writer or the readers and never blocks them, and is what the automatic checkpoint runs anyway. A
/// commit checkpoints inline again only when the WAL reaches `inlineThreshold` (the background checkpoints failing or
/// not keeping up), so the WAL stays bounded.
///
/// Why 4,000 frames and not SQLite's 1,000: even beside the writer a checkpoint slows the commits it overlaps (its
/// writes and its two syncs queue on the same disk as the commit's `fdatasync`), so one `queueChange` in 115–120
/// was still two to three times the others — about 1 % of the calls, exactly the p99. At 4,000 frames it is one call
/// in about 500. The WAL's file keeps the largest size it reached: about 16 MiB from queued changes, 33 MiB (at
/// `inlineThreshold`) after a burst the background checkpoints could not keep up with, such as an initial sync.
///
/// Durability does not move: a commit is durable when its WAL frames are synced (`synchronous=FULL` on the writer);
/// a checkpoint copies what is already durable, syncing the WAL before and the database file after (FULL here too).
final class BackgroundCheckpoints: Sendable {
    static let threshold: Int32 = 4000
    static let inlineThreshold: Int32 = 2 * threshold

    private let path: String
    private let queue = DispatchQueue(label: "repairsync.checkpoint")
    private let pending = Atomic(false)
    /// WAL frames the last background checkpoint copied back (0 again once the WAL restarts): the hook asks for the
    /// next checkpoint when `threshold` frames were written since, not after every commit of a WAL that is merely
    /// long (it restarts only at a write that finds every frame copied back and no reader on them).
    private let backfilled = Atomic<Int32>(0)
    /// The checkpoints' own connection, opened at the first checkpoint (the file surely exists then) and kept; nil
    /// for good once `close` ran. Used on `queue` only.
    private let connection = Mutex<(queue: DatabaseQueue?, closed: Bool)>((nil, false))
    /// Checkpoints run in the background, and the WAL's size in frames after the last commit (for tests).
    let completed = Atomic(0)
    let walPages = Atomic<Int32>(0)
    /// What the writer's hook is given: a box holding these checkpoints weakly, retained for as long as the hook may
    /// call it — released by `uninstall`; a store dropped without `close` leaves the box, not its resources.
    private nonisolated(unsafe) let hookTarget: UnsafeMutableRawPointer
    private let installed = Atomic(false)

    /// Installs the hook on the writer connection `db` of the WAL database at `path`.
    static func install(on db: Database, path: String) -> BackgroundCheckpoints {
        let checkpoints = BackgroundCheckpoints(path: path)
        if let connection = db.sqliteConnection {
            // Replaces SQLite's automatic checkpoint (itself a WAL hook, whose argument is a number, not an object).
            sqlite3_wal_hook(connection, walHook, checkpoints.hookTarget)
            checkpoints.installed.store(true, ordering: .relaxed)
        }
        return checkpoints
    }

    /// Removes the hook from the writer connection `db` (before the store is closed): its commits checkpoint inline
    /// again, as on any connection.
    func uninstall(from db: Database) {
        guard let connection = db.sqliteConnection, installed.exchange(false, ordering: .relaxed) else { return }
        sqlite3_wal_autocheckpoint(connection, Self.threshold)
        Unmanaged<HookTarget>.fromOpaque(hookTarget).release()
    }

    private init(path: String) {
        self.path = path
        hookTarget = Unmanaged.passRetained(HookTarget()).toOpaque()
        Unmanaged<HookTarget>.fromOpaque(hookTarget).takeUnretainedValue().checkpoints = self
    }

    /// Asks for a checkpoint; one already asked for and not started yet covers this one.
    private func request() {
        guard pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        queue.async { [self] in
            pending.store(false, ordering: .releasing)
            checkpoint()
        }
    }

    /// Runs `body` while no background checkpoint can start (for tests); those asked for meanwhile run after it.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync { try body() }
    }

    /// Returns once every checkpoint asked for so far has run (for tests).
    func drain() {
        queue.sync {}
    }

    /// Closes the connection once any checkpoint under way is done; later requests do nothing (the store is being
    /// closed, its files maybe removed: a connection opened now would create an empty one).
    func close() {
        queue.sync {
            connection.withLock { state in
                try? state.queue?.close()
                state = (nil, true)
            }
        }
    }

    /// A PASSIVE checkpoint. A failure leaves the frames in the WAL for the next one (or, past `inlineThreshold`, for
    /// the writer).
    private func checkpoint() {
        let database = connection.withLock { state -> DatabaseQueue? in
            guard !state.closed else { return nil }
            if state.queue == nil {
                var configuration = Configuration()
                configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
                state.queue = try? DatabaseQueue(path: path, configuration: configuration)
            }
            return state.queue
        }
        guard let database, let result = try? database.writeWithoutTransaction({ db in try db.checkpoint(.passive) })
        else { return }
        backfilled.store(Int32(clamping: result.checkpointedFrameCount), ordering: .relaxed)
        completed.add(1, ordering: .relaxed)
    }

    /// After a commit left `pages` frames in the WAL: a checkpoint asked for once `threshold` frames are not copied
    /// back yet.
    fileprivate func committed(walPages pages: Int32) {
        walPages.store(pages, ordering: .relaxed)
        var copied = backfilled.load(ordering: .relaxed)
        if pages < copied {
            // The WAL restarted from its beginning: nothing in it is copied back yet.
            backfilled.store(0, ordering: .relaxed)
            copied = 0
        }
        if pages >= Self.threshold, pages - copied >= Self.threshold { request() }
    }

    /// What the C hook holds: the checkpoints, weakly.
    fileprivate final class HookTarget: @unchecked Sendable {
        weak var checkpoints: BackgroundCheckpoints?
    }
}

/// Called by SQLite on the writer after each commit in WAL mode, with the WAL's size in pages.
private func walHook(
    _ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ pages: Int32
) -> Int32 {
    if pages >= BackgroundCheckpoints.inlineThreshold {
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    } else if let context {
        Unmanaged<BackgroundCheckpoints.HookTarget>.fromOpaque(context).takeUnretainedValue().checkpoints?
            .committed(walPages: pages)
    }
    return SQLITE_OK
}
