import Foundation
import RepairSyncProtocol
import Testing

/// `JSONValueEncoder` and `JSONValueDecoder`: the shapes the socket writes, deterministic, and what they refuse.
@Suite("JSON value coding")
struct JSONValueCodingTests {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()

    @Test("keys come in the type's order, dictionaries sorted, nil left out by encodeIfPresent and written by encode")
    func shapes() throws {
        let report = SyncRunReport(
            run: 3, stop: nil, offline: false, pushed: 1, pushedByCollection: ["orders": 1], pushFailures: 0, dead: 0,
            conflicts: 0, pulled: ["tickets": 2, "clients": 5, "orders": 1], deleted: 0, durationMilliseconds: 12,
            retryAfterMilliseconds: nil, nextChangeDueMilliseconds: 500)
        #expect(
            try encoder.encode(report).serialized
                == #"{"run":3,"offline":false,"pushed":1,"pushedByCollection":{"orders":1},"pushFailures":0,"dead":0,"conflicts":0,"pulled":{"clients":5,"orders":1,"tickets":2},"deleted":0,"durationMilliseconds":12,"nextChangeDueMilliseconds":500}"#
        )
        let check = DoctorCheck("api", .ok, "answers")
        #expect(try encoder.encode(check).serialized == #"{"name":"api","level":"ok","detail":"answers","fix":null}"#)
    }

    @Test("the same value always gives the same text, whatever the process's hash seed")
    func deterministic() throws {
        let fields: [String: String?] = Dictionary(
            uniqueKeysWithValues: (0..<50).map { ("field\($0)", $0 % 3 == 0 ? nil : "v\($0)") })
        let first = try encoder.encode(fields).serialized
        #expect(first.hasPrefix(#"{"field0":null,"field1":"v1","field10":"v10","#))
        #expect(try encoder.encode(fields).serialized == first)
    }

    @Test("records keep the API's snake_case shape, money as decimal text, times with milliseconds; and decode back")
    func records() throws {
        let order = Order(
            id: "ord_1", orderNumber: 1001, status: .inProgress, total: Money(exactly: "149.99"), clientId: "cli_1",
            createdAt: Timestamp(millisecondsSince1970: 0), updatedAt: Timestamp(millisecondsSince1970: 1_500),
            version: 2)
        let json = try encoder.encode(order)
        #expect(json["order_number"] == .number(1001))
        #expect(json["total"] == .string("149.99"))
        #expect(json["notes"] == .null, "records write absent values as null")
        #expect(json["updated_at"] == .string("1970-01-01T00:00:01.500Z"))
        #expect(try decoder.decode(Order.self, from: json) == order)
    }

    @Test("numbers keep their text: Decimal exactly, three-decimal fractions, 64-bit integers")
    func numbers() throws {
        #expect(try encoder.encode(Decimal(string: "0.1")! + Decimal(string: "0.2")!) == .number("0.3"))
        #expect(try encoder.encode(Thousandths(0.4)) == .number("0.400"))
        #expect(try encoder.encode(Thousandths(1)) == .number("1.000"))
        #expect(try encoder.encode(Int64.max) == .number("9223372036854775807"))
        #expect(try decoder.decode(Int64.self, from: .number("9223372036854775807")) == .max)
        #expect(try decoder.decode(Thousandths.self, from: .number("0.400")) == Thousandths(thousandths: 400))
        #expect(throws: EncodingError.self) { try encoder.encode(Double.nan) }
    }

    @Test("an integer must be one: 1.5 and \"1\" are refused, 1e3 is a thousand")
    func integers() throws {
        #expect(try decoder.decode(Int.self, from: .number("1e3")) == 1000)
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .number("1.5")) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .string("1")) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: .number("256")) }
    }

    @Test("a JSONValue inside a Codable type goes through as it is")
    func embedded() throws {
        struct Wrapper: Codable, Equatable {
            var raw: JSONValue
        }
        let raw = JSONValue.object([("b", .number("1.50")), ("a", .array([.null, .bool(true)]))])
        let json = try encoder.encode(Wrapper(raw: raw))
        #expect(json.serialized == #"{"raw":{"b":1.50,"a":[null,true]}}"#)
        #expect(try decoder.decode(Wrapper.self, from: json) == Wrapper(raw: raw))
    }

    @Test("open enums keep a value this version does not know")
    func openEnums() throws {
        let state = try decoder.decode(ChangeState.self, from: .string("parked"))
        #expect(state == .unrecognized("parked"))
        #expect(try encoder.encode(state) == .string("parked"))
        #expect(try decoder.decode(ChangeState.self, from: .string("in_flight")) == .inFlight)
    }

    @Test("every result type decodes what it encodes")
    func roundTrips() throws {
        let status = StatusSnapshot(
            state: .syncing, step: "pulling", progress: Thousandths(0.25), online: true, probe: "netlink",
            lastOnlineChange: nil, paused: false, nextRun: .init(at: Timestamp(millisecondsSince1970: 5), reason: nil),
            lastSyncAt: nil, lastSuccessAt: Timestamp(millisecondsSince1970: 9), pending: 1, failed: 0, dead: 0,
            held: 0,
            openConflicts: 0, clockOffsetMs: -3,
            collections: [
                .init(
                    collection: "orders", state: "idle", records: 3, hasCursor: true, lastSyncedAt: nil,
                    lastSuccessAt: nil, lastError: "x")
            ],
            storeBytes: 4096, retention: nil,
            metrics: .init(
                runs: 1, successes: 1, failures: 0, lastDurationMs: nil, averageDurationMs: 4,
                conflictsByOutcome: ["merged": 1]))
        let json = try encoder.encode(status)
        #expect(json["lastSyncAt"] == .null)
        #expect(json["message"] == nil, "message only on error")
        #expect(json["nextRun"]?["reason"] == .null)
        #expect(try decoder.decode(StatusSnapshot.self, from: json) == status)

        // A retention pass that pruned only the conflict log says so; a daemon that never said decodes as 0.
        let retention = StatusSnapshot.Retention(
            at: Timestamp(millisecondsSince1970: 7), orders: 0, devices: 0, tickets: 0, messages: 0, conflicts: 12)
        let retentionJSON = try encoder.encode(retention)
        #expect(retentionJSON["conflicts"] == .number(12))
        #expect(try decoder.decode(StatusSnapshot.Retention.self, from: retentionJSON) == retention)
        let older = JSONValue.object([
            ("at", .null), ("orders", .number(1)), ("devices", .number(0)), ("tickets", .number(0)),
            ("messages", .number(0)),
        ])
        #expect(try decoder.decode(StatusSnapshot.Retention.self, from: older).conflicts == 0)

        let change = OutboxChange(
            seq: 4, collection: "orders", recordId: "ord_1", orderKey: "orders:ord_1", kind: .update,
            fields: ["notes": nil],
            idempotencyKey: "k", state: .dead, attempts: 2, sent: false, nextAttemptAt: nil, lastError: "422",
            createdAt: Timestamp(millisecondsSince1970: 1), editedAt: Timestamp(millisecondsSince1970: 2))
        let changeJSON = try encoder.encode(change)
        #expect(changeJSON["recordId"] == .string("ord_1"), "the daemon's own keys are camelCase")
        #expect(changeJSON["fields"] == .object([("notes", .null)]))
        #expect(try decoder.decode(OutboxChange.self, from: changeJSON) == change)

        for result in [
            RPC.Sync.Result.started,
            .finished(
                try decoder.decode(
                    SyncRunReport.self,
                    from: .object([
                        ("run", .number(1)), ("offline", .bool(false)), ("pushed", .number(0)),
                        ("pushedByCollection", .object([])),
                        ("pushFailures", .number(0)), ("dead", .number(0)), ("conflicts", .number(0)),
                        ("pulled", .object([])),
                        ("deleted", .number(0)), ("durationMilliseconds", .number(3)),
                    ]))),
        ] {
            #expect(try decoder.decode(RPC.Sync.Result.self, from: encoder.encode(result)) == result)
        }
        #expect(try encoder.encode(RPC.Sync.Result.started).serialized == #"{"started":true}"#)
    }
}
