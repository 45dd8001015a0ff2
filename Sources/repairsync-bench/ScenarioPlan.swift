import Foundation

/// What one bench run does: the binaries, the sizes, and which orders each scenario changes (disjoint ranges of the
/// large shop's orders, so that no scenario conflicts with another's changes).
struct ScenarioPlan: Sendable {
    var binaries: URL
    var workDirectory: String
    var orders: Int
    var smallOrders: Int
    var pushChanges: Int
    var slowPushChanges: Int
    var latencyMilliseconds: Int
    var idleSeconds: Int
    /// `--scale N`: only the scenarios that compare a shop N times larger with the 1× one (no HTTPS, socket
    /// writes, badge, push or idle).
    var scaleFactor: Int? = nil

    /// Orders changed on the server for the scale scenario.
    static let scaleChanges = 1000
    /// queueChange calls from one client (the rest of `pushChanges` come from the 20 concurrent clients).
    static let singleClientCalls = 1000
    static let concurrentClients = 20
    /// Calls in one JSON-RPC batch in the batched queueChange row.
    static let queueChangeBatch = 50

    static func ordersNeeded(pushChanges: Int, slowPushChanges: Int) -> Int {
        scaleChanges + 2 * pushChanges + 2 * slowPushChanges
    }

    /// Records the seeder writes for `orders` orders (see SeedOptions).
    static func records(orders: Int) -> Int {
        let clients = max(1, orders / 2)
        let tickets = max(1, orders / 2)
        return orders + (orders + orders / 2) + clients + tickets + tickets * 4
    }

    var concurrentCalls: Int { pushChanges - Self.singleClientCalls }

    /// Index ranges into the large shop's orders sorted by id.
    var scaleRange: Range<Int> { 0..<Self.scaleChanges }
    var queuedRange: Range<Int> { scaleRange.upperBound..<(scaleRange.upperBound + pushChanges) }
    var baselinePushRange: Range<Int> { queuedRange.upperBound..<(queuedRange.upperBound + pushChanges) }
    var slowQueuedRange: Range<Int> { baselinePushRange.upperBound..<(baselinePushRange.upperBound + slowPushChanges) }
    var slowBaselineRange: Range<Int> { slowQueuedRange.upperBound..<(slowQueuedRange.upperBound + slowPushChanges) }

    func binary(_ name: String) -> URL { binaries.appendingPathComponent(name) }
    func path(_ name: String) -> String { (workDirectory as NSString).appendingPathComponent(name) }
}
