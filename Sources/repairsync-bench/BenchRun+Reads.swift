import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 7: what a shop's tools read, on the large store against the small one — the newest 50 orders
/// (`repairctl orders --limit 50`) and one order with its client and devices (`getOrder`) — and the store's size on
/// disk. The calls go over the socket as `repairctl` sends them; the process start of `repairctl` (a few
/// milliseconds, the same at any size) is left out so that the query's share shows.
extension BenchRun {
    func replicaReads(large: DaemonProcess, control: ControlClient, small: DaemonProcess) throws -> [ResultRow] {
        Log.say("==> listOrders and getOrder, large store vs small store")
        let smallControl = try ControlClient(path: small.socketPath)
        // Orders spread over each store, so that the detail reads do not all hit the same pages.
        func spread(_ storePath: String, offset: Int) throws -> [String] {
            let ids = try orderIds(storePath).map(\.id)
            return (0..<Self.readRounds).map { ids[($0 * 7919 + offset) % ids.count] }
        }
        let largeIds = try spread(large.storePath, offset: 0)
        let smallIds = try spread(small.storePath, offset: 0)
        // Whether the spread reads can find the stores' pages in the kernel's page cache, or go to the disk.
        let residency = (PageCache.residency(large.storePath), PageCache.residency(small.storePath))
        var largeList = Samples()
        var smallList = Samples()
        var largeGet = Samples()
        var smallGet = Samples()
        // Warm both (the first call of a connection opens a reader), then interleave the rounds.
        for client in [control, smallControl] { _ = try client.call("listOrders", .object(["limit": .number("50")])) }
        for round in 0..<Self.readRounds {
            largeList.append(try Self.timedList(control))
            smallList.append(try Self.timedList(smallControl))
            largeGet.append(try Self.timedGet(control, id: largeIds[round]))
            smallGet.append(try Self.timedGet(smallControl, id: smallIds[round]))
        }
        // The same with both stores read into the page cache first (other orders than above, so that SQLite's own
        // cache does not answer): what is left of the difference is the daemon's, not the disk's.
        for path in [large.storePath, small.storePath] { PageCache.readWhole(path) }
        let warmLargeIds = try spread(large.storePath, offset: 3)
        let warmSmallIds = try spread(small.storePath, offset: 3)
        var warmLarge = Samples()
        var warmSmall = Samples()
        for round in 0..<Self.readRounds {
            warmLarge.append(try Self.timedGet(control, id: warmLargeIds[round]))
            warmSmall.append(try Self.timedGet(smallControl, id: warmSmallIds[round]))
        }
        let largeBytes = Self.storeBytes(large.storePath)
        let smallBytes = Self.storeBytes(small.storePath)
        let largeRecords = ScenarioPlan.records(orders: plan.orders)
        let smallRecords = ScenarioPlan.records(orders: plan.smallOrders)
        Log.say(
            "    listOrders \(Format.ms(largeList.median)) vs \(Format.ms(smallList.median)); getOrder \(Format.ms(largeGet.median)) vs \(Format.ms(smallGet.median)); store \(Format.mib(largeBytes / 1_048_576)) vs \(Format.mib(smallBytes / 1_048_576))"
        )
        Log.say(
            "    in the page cache before: \(Self.percent(residency.0)) vs \(Self.percent(residency.1)); getOrder with both stores cached: \(Format.ms(warmLarge.median)) vs \(Format.ms(warmSmall.median))"
        )
        let listRatio = largeList.median / smallList.median
        let getRatio = largeGet.median / smallGet.median
        let warmRatio = warmLarge.median / warmSmall.median
        return [
            ResultRow(
                scenario:
                    "`repairctl orders --limit 50` (listOrders over the socket), \(plan.orders)-order store (median of \(Self.readRounds))",
                measured: Format.ms(largeList.median),
                baseline: "\(plan.smallOrders)-order store: \(Format.ms(smallList.median))",
                ratio: Format.ratio(listRatio),
                target: "≤ 1.50×", passed: listRatio <= 1.5),
            ResultRow(
                scenario:
                    "getOrder (order, client, devices), \(plan.orders)-order store (median of \(Self.readRounds))",
                measured: Format.ms(largeGet.median),
                baseline: "\(plan.smallOrders)-order store: \(Format.ms(smallGet.median))",
                ratio: Format.ratio(getRatio),
                target: "≤ 1.50×", passed: getRatio <= 1.5),
            ResultRow(
                scenario: "the stores in the kernel's page cache before those reads (large / small)",
                measured: "\(Self.percent(residency.0)) / \(Self.percent(residency.1))", baseline: "—", ratio: "—",
                target: "(reported)", passed: nil),
            ResultRow(
                scenario:
                    "getOrder, both stores read into the page cache first, other orders (median of \(Self.readRounds))",
                measured: Format.ms(warmLarge.median),
                baseline: "\(plan.smallOrders)-order store: \(Format.ms(warmSmall.median))",
                ratio: Format.ratio(warmRatio),
                target: "≤ 1.50×", passed: warmRatio <= 1.5),
            ResultRow(
                scenario: "store on disk (\(largeRecords) records)",
                measured:
                    "\(Format.mib(largeBytes / 1_048_576)) (\(Int(largeBytes / Double(largeRecords))) bytes/record)",
                baseline: "\(smallRecords) records: \(Format.mib(smallBytes / 1_048_576))",
                ratio: Format.ratio(largeBytes / smallBytes), target: "(reported)", passed: nil),
        ]
    }

    static let readRounds = 40

    static func percent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }

    /// `--only reads`: the two shops, their initial syncs, and the reads above (100,000 orders against 10,000 by
    /// default; `--orders` and `--small-orders` set them).
    func runReadsOnly() async throws -> [ResultRow] {
        try await withLargeAndSmallShop { large, control, _, small, _ in
            try replicaReads(large: large, control: control, small: small)
        }
    }

    static func timedList(_ client: ControlClient) throws -> Double {
        let start = ContinuousClock.now
        let result = try client.call("listOrders", .object(["limit": .number("50")]))
        let elapsed = (ContinuousClock.now - start).milliseconds
        guard case .array(let orders) = result, orders.count == 50 else {
            throw BenchError("listOrders did not return 50 orders")
        }
        return elapsed
    }

    static func timedGet(_ client: ControlClient, id: String) throws -> Double {
        let start = ContinuousClock.now
        let result = try client.call("getOrder", .object(["id": .string(id)]))
        let elapsed = (ContinuousClock.now - start).milliseconds
        guard result["order"]?["id"]?.stringValue == id else { throw BenchError("getOrder \(id): \(result)") }
        return elapsed
    }

    /// The database file and its WAL, in bytes.
    static func storeBytes(_ path: String) -> Double {
        [path, path + "-wal"].reduce(0) { total, file in
            total + Double((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }
}
