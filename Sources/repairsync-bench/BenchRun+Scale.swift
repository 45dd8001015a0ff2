import Foundation
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

/// Scenario 6: pulling the same number of changed records from a large and from a small store.
extension BenchRun {
    func scale(
        large: DaemonProcess, largeAPI: PlainClient, control: ControlClient, small: DaemonProcess, smallAPI: PlainClient
    )
        async throws -> [ResultRow]
    {
        Log.say("==> pull of \(ScenarioPlan.scaleChanges) changed orders, large store vs small store")
        let largeIds = try orderIds(large.storePath)[plan.scaleRange].map(\.id)
        let smallIds = try orderIds(small.storePath).prefix(ScenarioPlan.scaleChanges).map(\.id)
        let smallControl = try ControlClient(path: small.socketPath)
        var largeTimes = Samples()
        var smallTimes = Samples()
        // The pulls take tens of milliseconds: the fastest of five rounds each, interleaved, so that a moment of
        // other work on the machine does not decide the ratio.
        for round in 0..<5 {
            largeTimes.append(
                try await changeAndPull(largeIds, api: largeAPI, control: control, round: round).milliseconds)
            smallTimes.append(
                try await changeAndPull(smallIds, api: smallAPI, control: smallControl, round: round).milliseconds)
        }
        let ratio = largeTimes.minimum / smallTimes.minimum
        Log.say("    large store \(Format.ms(largeTimes.minimum)), small store \(Format.ms(smallTimes.minimum))")
        return [
            ResultRow(
                scenario: "pull \(ScenarioPlan.scaleChanges) changed orders, \(plan.orders)-order store (best of 5)",
                measured: Format.ms(largeTimes.minimum),
                baseline: "\(plan.smallOrders)-order store: \(Format.ms(smallTimes.minimum))",
                ratio: Format.ratio(ratio),
                target: "≤ 1.50× (follows the changes)", passed: ratio <= 1.5)
        ]
    }

    /// `--only pull`: the two shops, their initial syncs, and the pull above (100,000 orders against 10,000 by
    /// default; `--orders` and `--small-orders` set them).
    func runPullOnly() async throws -> [ResultRow] {
        try await withLargeAndSmallShop { large, control, largeAPI, small, smallAPI in
            try await scale(large: large, largeAPI: largeAPI, control: control, small: small, smallAPI: smallAPI)
        }
    }

    /// Edits `ids` on the server as another user would, then times a pull of orders.
    private func changeAndPull(_ ids: [String], api: PlainClient, control: ControlClient, round: Int) async throws
        -> Duration
    {
        for id in ids {
            let response = try await api.send(
                .PATCH, "/admin/records/orders/\(id)", json: #"{"notes": "changed on the server, round \#(round)"}"#)
            guard response.status == 200 else { throw BenchError("admin edit of order \(id): \(response.status)") }
        }
        let (report, time) = try syncAndWait(control, collections: ["orders"])
        guard Self.pulled(report, "orders") == ids.count else {
            throw BenchError("expected \(ids.count) orders pulled, got \(Self.pulled(report, "orders"))")
        }
        return time
    }
}
