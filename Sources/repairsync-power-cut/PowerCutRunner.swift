import ArgumentParser
import Foundation
import GRDB
import Logging
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import SQLiteCrashVFS
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The workload of the power-cut scenario (docs/reliability.md, "Power cuts"), in a process whose SQLite goes
/// through the crash VFS: the store opened as the daemon opens it, a pull of changed pages, and meanwhile bursts of
/// `queueChange` (after another program's write) and of `updateOrder`/`updateDevice` from concurrent callers, which
/// the engine group-commits; then a push of everything. Each acknowledgement is appended to `--acks` the moment the
/// call returns. At the armed event the VFS cuts the power and the process ends with exit code 86; otherwise it
/// prints `events N` and exits 0. Not installed; tests and the soak only.
@main
struct PowerCutRunner: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsync-power-cut",
        abstract: "Run the power-cut workload on a store through the crash VFS (not installed; tests only).")

    @Option(help: "The SQLite store (a copy; it is cut).") var store: String
    @Option(help: "The API base URL.") var api: String
    @Option(help: "The API token.") var token: String
    @Option(help: "Where each acknowledgement is appended as it returns.") var acks: String
    @Option(help: "Records per changes page.") var pageSize = 10
    @Option(help: "Orders changed by another program, then queued with queueChange (comma-separated ids).")
    var queueOrders = ""
    @Option(help: "Orders changed through updateOrder (comma-separated ids).") var updateOrders = ""
    @Option(help: "Devices changed through updateDevice (comma-separated ids).") var updateDevices = ""
    @Option(help: "Concurrent callers of each kind.") var callers = 8
    @Option(help: "Text that makes this run's values unique.") var tag = "run"
    @Option(help: "Cut the power at this event (1-based; 0: never).") var cutAt: Int64 = 0
    @Option(help: "drop, subset or tear.") var mode = "drop"
    @Option(help: "Seed of the VFS's random choices.") var seed: UInt64 = 1
    @Option(help: "The writer's synchronous setting: full (as shipped) or normal (to show the test fails).")
    var synchronous = "full"

    static let cutExitCode: Int32 = 86

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let modes = ["drop": Int32(CRASH_VFS_DROP), "subset": Int32(CRASH_VFS_SUBSET), "tear": Int32(CRASH_VFS_TEAR)]
        guard let vfsMode = modes[mode] else { throw ValidationError("--mode is drop, subset or tear") }
        guard crash_vfs_install(store) == 0 else { throw ValidationError("the crash VFS did not register") }
        crash_vfs_arm(cutAt, vfsMode, seed, Self.cutExitCode)

        // As the daemon does (Daemon.serve): the lock, then the store, then the engine.
        let lock = try StoreLock.acquire(forStoreAt: store)
        defer { withExtendedLifetime(lock) {} }
        let replica = try ReplicaStore.open(at: store)
        if synchronous == "normal" {
            try await replica.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        }
        let (pulling, pullingStarted) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let engine = try SyncEngine(
            // Pages of exactly `pageSize`: the scenario computed which records each page holds, so the link meter
            // must not shrink them (a loaded machine makes even loopback look slow).
            store: replica,
            api: APIClient(
                configuration: .init(baseURL: api, token: token), link: LinkMeter(targetPageTime: .seconds(86_400))),
            configuration: EngineConfiguration(pageSize: pageSize, completedHold: .zero),
            events: EngineEvents { event in
                if case .pageReceived = event { pullingStarted.yield() }
            })
        let log = try AcknowledgementLog(path: acks)

        // Phase 1: the pull, and once its first page is in (its push step is over, so the server's pages stay as
        // the scenario computed them), the bursts of local changes beside it.
        let pull = Task { await engine.sync(Set(SyncCollection.allCases)) }
        var iterator = pulling.makeAsyncIterator()
        _ = await iterator.next()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for slice in Self.slices(queueOrders, callers) {
                group.addTask { try await queueChanges(slice, engine: engine, log: log) }
            }
            for slice in Self.slices(updateOrders, callers) {
                group.addTask { try await updates(.orders, "notes", slice, engine: engine, log: log) }
            }
            for slice in Self.slices(updateDevices, callers) {
                group.addTask { try await updates(.devices, "diagnosis", slice, engine: engine, log: log) }
            }
            try await group.waitForAll()
        }
        let pulled = await pull.value
        guard pulled.succeeded else { throw ValidationError("the pull failed: \(pulled.stop ?? "")") }
        // Phase 2: everything queued goes out (in-flight marks and acknowledgements, group-committed).
        let pushed = await engine.sync([])
        guard pushed.succeeded else { throw ValidationError("the push failed: \(pushed.stop ?? "")") }
        print("events \(crash_vfs_events())")
    }

    /// Another program writes the order's notes (its own connection and transaction), then calls `queueChange`.
    func queueChanges(_ ids: [String], engine: SyncEngine, log: AcknowledgementLog) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let tool = try DatabaseQueue(path: store, configuration: configuration)
        for id in ids {
            let value = "\(tag) queued \(id)"
            try await tool.write { db in
                try db.execute(sql: "UPDATE orders SET notes = ? WHERE id = ?", arguments: [value, id])
            }
            let result = try await engine.queueChange(.orderUpdated, id: id)
            switch result {
            case .queued, .alreadyQueued: break  // (a run may have queued the row's edit first)
            case .nothingChanged: throw ValidationError("queueChange \(id): \(result)")
            }
            log.append("orders \(id) notes \(value)")
        }
    }

    func updates(
        _ collection: SyncCollection, _ field: String, _ ids: [String], engine: SyncEngine, log: AcknowledgementLog
    ) async throws {
        for id in ids {
            let value = "\(tag) updated \(id)"
            try await engine.update(collection, id: id, fields: [field: value])
            log.append("\(collection.name) \(id) \(field) \(value)")
        }
    }

    /// The ids split among `callers` callers (round robin).
    static func slices(_ list: String, _ callers: Int) -> [[String]] {
        let ids = list.split(separator: ",").map(String.init)
        return (0..<min(callers, ids.count)).map { caller in
            stride(from: caller, to: ids.count, by: callers).map { ids[$0] }
        }
    }
}

/// Acknowledgements, one line each (`collection id field value`), appended with one write(2) the moment a call
/// returns: a line that is in the file was acknowledged before the cut. (The power cut is simulated for the store
/// only: this file plays the callers, who are elsewhere.)
final class AcknowledgementLog: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    deinit { close(descriptor) }
}
