internal import RepairSyncEngine
internal import RepairSyncProtocol
internal import Synchronization

/// `statusChanged` with the current status, then on every change, for as long as the connection stays: the
/// engine's changes, and the change stream's (connected, connecting, unavailable) with the engine's latest status.
struct SubscribeHandler: ControlHandler {
    typealias Method = RPC.Subscribe
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> Bool {
        let (engine, scheduler) = (services.engine, services.scheduler)
        let engineUpdates = await engine.statusUpdates()
        guard let events = scheduler.events else {
            try request.subscribe(
                RPC.StatusChanged.self,
                to: engineUpdates.map { StatusSnapshot($0, scheduler: scheduler, storeBytes: engine.storeBytes) })
            return true
        }
        let streamUpdates = events.stateUpdates()
        let (merged, continuation) = AsyncStream.makeStream(of: StatusSnapshot.self, bufferingPolicy: .unbounded)
        let latest = LatestEngineStatus()
        let forwarding = Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await status in engineUpdates {
                        latest.value.withLock { $0 = status }
                        continuation.yield(StatusSnapshot(status, scheduler: scheduler, storeBytes: engine.storeBytes))
                    }
                    continuation.finish()
                }
                group.addTask {
                    for await _ in streamUpdates {
                        guard let status = latest.value.withLock({ $0 }) else { continue }
                        continuation.yield(StatusSnapshot(status, scheduler: scheduler, storeBytes: engine.storeBytes))
                    }
                }
            }
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        try request.subscribe(RPC.StatusChanged.self, to: merged)
        return true
    }

    /// The engine's last status, for a notification caused by the change stream.
    final class LatestEngineStatus: Sendable {
        let value = Mutex<EngineStatus?>(nil)
    }
}
