import Foundation
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

/// Scenario 4: pushing queued changes, with and without added latency, against a plain client sending the same
/// kind of requests one after another.
extension BenchRun {
    func push(daemon: DaemonProcess, control: ControlClient, api: PlainClient) async throws -> [ResultRow] {
        let ids = try orderIds(daemon.storePath)
        Log.say("==> push of \(plan.pushChanges) changes, no added latency")
        let fast = try await pushRound(
            control: control, api: api, baselineIds: Array(ids[plan.baselinePushRange]), expected: plan.pushChanges)

        Log.say("==> push of \(plan.slowPushChanges) changes, \(plan.latencyMilliseconds) ms added latency")
        let slowIds = ids[plan.slowQueuedRange].map(\.id)
        try editAtTheCounter(slowIds, storePath: daemon.storePath)
        for id in slowIds { _ = try Self.timedQueueChange(control, id: id) }
        let plan = #"{"rate": 1, "kinds": {"slow": 1}, "slow_ms": \#(self.plan.latencyMilliseconds)}"#
        guard try await api.send(.PUT, "/admin/faults", json: plan).status == 200 else {
            throw BenchError("the backend refused the latency plan")
        }
        let slow: (daemon: Duration, baseline: Duration)
        do {
            slow = try await pushRound(
                control: control, api: api, baselineIds: Array(ids[self.plan.slowBaselineRange]),
                expected: self.plan.slowPushChanges)
        } catch {
            _ = try? await api.send(.DELETE, "/admin/faults")
            throw error
        }
        _ = try await api.send(.DELETE, "/admin/faults")
        _ = try control.call("resume")
        let fastSpeedup = fast.baseline / fast.daemon
        let slowSpeedup = slow.baseline / slow.daemon
        return [
            ResultRow(
                scenario: "push \(self.plan.pushChanges) changes, 0 ms added",
                measured:
                    "\(Format.seconds(fast.daemon)) (\(Format.rate(Double(self.plan.pushChanges) / fast.daemon.seconds, "changes")))",
                baseline: "sequential client \(Format.seconds(fast.baseline))",
                ratio: Format.ratio(fastSpeedup) + " faster", target: "(reported)", passed: nil),
            ResultRow(
                scenario: "push \(self.plan.slowPushChanges) changes, \(self.plan.latencyMilliseconds) ms added",
                measured:
                    "\(Format.seconds(slow.daemon)) (\(Format.rate(Double(self.plan.slowPushChanges) / slow.daemon.seconds, "changes")))",
                baseline: "sequential client \(Format.seconds(slow.baseline))",
                ratio: Format.ratio(slowSpeedup) + " faster", target: "≥ 4× faster", passed: slowSpeedup >= 4),
        ]
    }

    /// The plain client PATCHes `baselineIds` one at a time; then the daemon pushes what is queued (a push-only run).
    private func pushRound(
        control: ControlClient, api: PlainClient, baselineIds: [(id: String, version: Int)], expected: Int
    )
        async throws -> (daemon: Duration, baseline: Duration)
    {
        let start = ContinuousClock.now
        for (index, order) in baselineIds.enumerated() {
            let response = try await api.send(
                .PATCH, "/api/v1/orders/\(order.id)", json: #"{"notes": "changed by the baseline client \#(index)"}"#,
                headers: [("Idempotency-Key", UUID().uuidString.lowercased()), ("If-Match", "\"\(order.version)\"")])
            guard response.status == 200 else { throw BenchError("baseline PATCH of \(order.id): \(response.status)") }
        }
        let baseline = ContinuousClock.now - start
        let (report, time) = try syncAndWait(control, collections: [])
        guard report["pushed"]?.intValue == expected else {
            throw BenchError("expected \(expected) changes pushed: \(report)")
        }
        Log.say("    repairsyncd \(Format.seconds(time)), sequential client \(Format.seconds(baseline))")
        return (time, baseline)
    }
}
