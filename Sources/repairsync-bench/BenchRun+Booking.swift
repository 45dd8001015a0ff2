import Foundation
import NIOCore
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 5 (issue 23): booking in at the counter — a new client, an order and two devices over the socket — and
/// 1,000 such bookings made while the daemon cannot push, then pushed in one run.
extension BenchRun {
    static let bookings = 1000

    /// `--only booking`: this scenario alone, on a shop of `smallOrders` orders after its initial sync (the full run
    /// does it on the small shop's daemon too, after the large one's push scenarios).
    func runBookingOnly() async throws -> [ResultRow] {
        try await withSyncedShop("booking", orders: plan.smallOrders) { daemon, control, api in
            try await booking(daemon: daemon, control: control, api: api)
        }
    }

    func booking(daemon: DaemonProcess, control: ControlClient, api: PlainClient) async throws -> [ResultRow] {
        Log.say("==> booking in: \(Self.bookings) bookings over the socket (client + order + 2 devices), then pushed")
        // Paused, as offline: nothing goes out until the push below, and no run competes with the calls.
        _ = try control.call("pause")
        let floorPath = (daemon.directory as NSString).appendingPathComponent("state/floor-booking.sqlite")
        var floor = try SQLiteFloor.fullCommits(at: floorPath, count: 500)
        var latency = Samples()
        for index in 0..<Self.bookings {
            latency.append(try Self.timedBooking(control, index))
            if index == Self.bookings / 2 {
                floor.append(contentsOf: try SQLiteFloor.fullCommits(at: floorPath, count: 500))
            }
        }
        let pending = try control.call("status")["pending"]?.intValue ?? -1
        guard pending == 4 * Self.bookings else {
            throw BenchError("expected \(4 * Self.bookings) pending creates, status says \(pending)")
        }

        let before = try await api.counters()
        let (report, time) = try syncAndWait(control, collections: [])
        let after = try await api.counters()
        _ = try control.call("resume")
        guard report["pushed"]?.intValue == 4 * Self.bookings else {
            throw BenchError("the push did not send every create: \(report)")
        }
        // The second counters read counts itself.
        let requests = after.requests - before.requests - 1
        let created = after.created - before.created
        guard created == 4 * Self.bookings else {
            throw BenchError("the server created \(created) records, not \(4 * Self.bookings)")
        }

        Log.say("==> the same \(4 * Self.bookings) creates by a sequential plain client")
        let baselineStart = ContinuousClock.now
        for index in 0..<Self.bookings { try await Self.plainBooking(api, index) }
        let baseline = ContinuousClock.now - baselineStart
        Log.say(
            "    booking p50 \(Format.ms(latency.median)) p99 \(Format.ms(latency.p99)) (FULL commit p99 \(Format.ms(floor.p99))); push \(Format.seconds(time)) in \(requests) requests, plain client \(Format.seconds(baseline))"
        )
        // A booking is two calls (createClient, createOrder with its devices), each one transaction.
        let twoCommits = (p50: 2 * floor.median, p99: 2 * floor.p99)
        return [
            ResultRow(
                scenario: "booking in over the socket: client + order + 2 devices (p50 / p99 of \(Self.bookings))",
                measured: "\(Format.ms(latency.median)) / \(Format.ms(latency.p99))",
                baseline: "2 FULL commits \(Format.ms(twoCommits.p50)) / \(Format.ms(twoCommits.p99))",
                ratio: "p99 " + Format.ratio(latency.p99 / twoCommits.p99), target: "p99 ≤ 50 ms",
                passed: latency.p99 <= 50),
            ResultRow(
                scenario:
                    "\(Self.bookings) offline bookings pushed on reconnect (\(4 * Self.bookings) creates, parent first)",
                measured: "\(Format.seconds(time)), \(requests) requests",
                baseline: "sequential client \(Format.seconds(baseline)), \(4 * Self.bookings) requests",
                ratio: Format.ratio(baseline / time) + " faster",
                target: "one request per record (≤ \(4 * Self.bookings + 5)); faster than sequential",
                passed: requests <= 4 * Self.bookings + 5 && time < baseline),
        ]
    }

    /// One booking as the counter makes it; its wall time in milliseconds.
    static func timedBooking(_ control: ControlClient, _ index: Int) throws -> Double {
        let start = ContinuousClock.now
        let client = try control.call(
            "createClient",
            .object([
                "email": .string("walk-in-\(index)@example.com"), "firstName": .string("Walk"),
                "lastName": .string("In \(index)"),
            ]))
        guard let clientId = client["id"]?.stringValue else { throw BenchError("createClient: \(client)") }
        let order = try control.call(
            "createOrder",
            .object([
                "clientId": .string(clientId), "notes": .string("booked in at the counter (bench)"),
                "deposit": .string("20"),
                "devices": .array([
                    .object([
                        "type": .string("phone"), "brand": .string("Apple"), "issue": .string("cracked screen"),
                        "price": .string("89.99"),
                    ]),
                    .object(["type": .string("laptop"), "issue": .string("no power")]),
                ]),
            ]))
        let elapsed = (ContinuousClock.now - start).milliseconds
        guard order["order"]?["order_number"] == .null else {
            throw BenchError("a pending order with a number: \(order)")
        }
        return elapsed
    }

    /// The same four creates by a plain client, one after another, each waiting for its parent's answer.
    static func plainBooking(_ api: PlainClient, _ index: Int) async throws {
        let ids = (0..<4).map { _ in UUID().uuidString.lowercased() }
        let bodies = [
            (
                "clients",
                #"{"id":"\#(ids[0])","email":"plain-\#(index)@example.com","first_name":"Plain","last_name":"In \#(index)"}"#
            ),
            (
                "orders",
                #"{"id":"\#(ids[1])","client_id":"\#(ids[0])","notes":"booked in (baseline)","deposit":"20","status":"booked_in"}"#
            ),
            (
                "devices",
                #"{"id":"\#(ids[2])","order_id":"\#(ids[1])","type":"phone","brand":"Apple","issue":"cracked screen","price":"89.99","status":"booked_in"}"#
            ),
            (
                "devices",
                #"{"id":"\#(ids[3])","order_id":"\#(ids[1])","type":"laptop","issue":"no power","status":"booked_in"}"#
            ),
        ]
        for (collection, body) in bodies {
            let response = try await api.send(
                .POST, "/api/v1/\(collection)", json: body,
                headers: [("Idempotency-Key", UUID().uuidString.lowercased())])
            guard response.status == 201 else { throw BenchError("baseline POST /\(collection): \(response.status)") }
        }
    }
}

extension PlainClient {
    /// The server's request count and records created so far.
    func counters() async throws -> (requests: Int, created: Int) {
        let response = try await send(.GET, "/admin/counters")
        guard response.status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
        else { throw BenchError("counters: HTTP \(response.status)") }
        let created = (object["records_created"] as? [String: Int] ?? [:]).values.reduce(0, +)
        return (object["requests"] as? Int ?? 0, created)
    }
}
