import RepairSyncSimulation
import Testing

/// Operation lists the simulator shrank from failing seeds while booking in was built (issue 23), kept as
/// regressions: each failed before its fix.
@Suite("Simulator: booking-in regressions")
struct BookingRegressionTests {
    @Test(
        "an engine edit of an order another program inserted and never queued creates it (no PATCH of a record the server lacks), and a device booked on it follows its parent"
    )
    func editOfAnUnqueuedInsert() async {
        // Seed 440: the edit went out as a PATCH (404, the row deleted as "deleted remotely") and the device's create
        // was sent with no parent on the server.
        let result = await Simulator.replay(
            seed: 440,
            operations: [
                .localCreate(kind: 24, parent: 28, devices: 25),
                .toolInsert(kind: 46, parent: 22),
                .localUpdate(devices: false, record: 36, field: 46, value: 2),
                .localCreate(kind: 38, parent: 45, devices: 47),
            ], tracing: true)
        #expect(result.passed, "\(result.violations)")
        #expect(!result.trace.contains { $0.contains("PATCH /api/v1/orders/") })
        let orderPost = result.trace.firstIndex { $0.contains("POST /api/v1/orders") }
        let devicePost = result.trace.firstIndex { $0.contains("POST /api/v1/devices") }
        #expect(
            orderPost != nil && devicePost != nil && orderPost! < devicePost!, "the order is created before its device")
    }
}
