internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncControlServer
internal import RepairSyncModels
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// Deterministic random-input fuzzing of the two decoders that take outside bytes: the control socket's JSON-RPC
/// request decoder (the bounded parser and the dispatcher) and the changes-page decoder (real pages of every
/// collection from repair-api-dev as seeds). Inputs are mutations of the seeds drawn from a seeded generator, so a
/// crash is replayed with the same seed. Beyond not crashing, every reply must be one well-formed JSON-RPC response.
public struct Fuzz: Sendable {
    public var iterations = 20_000
    public var seconds: Double?
    public var seed: UInt64 = 1

    public init(iterations: Int = 20_000, seconds: Double? = nil, seed: UInt64 = 1) {
        self.iterations = iterations
        self.seconds = seconds
        self.seed = seed
    }

    static let requestSeeds: [String] = [
        #"{"jsonrpc":"2.0","method":"status","id":1}"#,
        #"{"jsonrpc":"2.0","method":"updateOrder","params":{"id":"ord_1","notes":"a note","status":"ready"},"id":"x"}"#,
        #"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"listOrders","params":{"limit":5,"offset":0}}]"#,
        #"{"jsonrpc":"2.0","method":"sync","params":{"collections":["orders","devices"],"wait":true},"id":null}"#,
        #"{"jsonrpc":"2.0","method":"resolveConflict","params":{"id":7,"keep":{"notes":"local"}},"id":2.5e3}"#,
        #"{"jsonrpc":"2.0","method":"replyToTicket","params":{"ticketId":"tkt_1","content":"caf\u00e9 \ud83d\ude00","internal":false},"id":3}"#,
    ]

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("fuzz") { workspace in
            try await ScenarioReport.measure("fuzz") { report in
                let server = try await APIServerProcess(
                    database: workspace.file("api.sqlite"), orders: 20, logPath: workspace.file("api.log"))
                defer { server.process.signal(SIGKILL) }
                var pages: [(SyncCollection, [UInt8])] = []
                for collection in SyncCollection.allCases {
                    let reply = try await server.admin.send("GET", "/api/v1/\(collection.name)/changes?limit=5")
                    pages.append((collection, Array(reply.body)))
                }
                await server.stop()

                let dispatcher = JSONRPCDispatcher<ControlRequestContext> { method, params, _ in
                    // Methods that decode their params with the catalogue's types, as the daemon's router does.
                    switch method {
                    case RPC.Status.name, RPC.Ping.name:
                        _ = try NoParams.decode(from: params)
                        return .string("ok")
                    case RPC.UpdateOrder.name:
                        let decoded = try RPC.UpdateOrder.Params.decode(from: params)
                        return .string(decoded.id + (decoded.notes?.value ?? ""))
                    case RPC.ListOrders.name:
                        return .number(try RPC.ListOrders.Params.decode(from: params).limit ?? 0)
                    case RPC.Sync.name:
                        let decoded = try RPC.Sync.Params.decode(from: params)
                        return .bool((decoded.collections ?? []).isEmpty && decoded.wait == true)
                    case RPC.ResolveConflict.name:
                        return .number(Int(try RPC.ResolveConflict.Params.decode(from: params).id))
                    default: throw JSONRPCError.methodNotFound(method)
                    }
                }
                let context = ControlRequestContext(peer: ControlPeer(pid: 1, uid: 0, gid: 0))
                let checker = JSONParser(limits: .init(maxDepth: 1000, maxNumberLength: 100_000))
                var random = SplitMix64(seed: seed)
                let seeds = Self.requestSeeds.map { Array($0.utf8) }
                var requests = 0
                var malformedReplies = 0
                var decodedPages = 0
                var pageInputs = 0
                let start = ContinuousClock.now
                let limit = seconds.map { Duration.milliseconds(Int64($0 * 1000)) }
                var iteration = 0
                while limit.map({ ContinuousClock.now - start < $0 }) ?? (iteration < iterations) {
                    iteration += 1
                    let input = Self.mutate(seeds.randomElement(using: &random)!, others: seeds, &random)
                    requests += 1
                    if let reply = await dispatcher.reply(to: input, context: context) {
                        if !Self.isWellFormedReply(reply, parser: checker) {
                            malformedReplies += 1
                            if report.notes.count < 5 {
                                report.notes.append(
                                    "input \(String(decoding: input.prefix(120), as: UTF8.self)) → \(reply.prefix(200))"
                                )
                            }
                        }
                    }
                    let (collection, page) = pages.randomElement(using: &random)!
                    pageInputs += 1
                    if Self.decodes(collection, Data(Self.mutate(page, others: [page], &random))) { decodedPages += 1 }
                }
                report.add(Figure("seed / inputs per decoder", "\(seed) / \(requests)"))
                report.add(Figure("crashes", "0 (a crash would have ended the run)"))
                report.add(
                    .count(
                        "requests answered with something other than one JSON-RPC response", malformedReplies, mustBe: 0
                    ))
                report.add(
                    Figure(
                        "mutated pages that still decoded (the rest were refused)", "\(decodedPages) of \(pageInputs)"))
            }
        }
    }

    /// A mutation of `bytes`: flips, inserts, deletions, truncation, splices, repeated chunks, deep nesting, long
    /// numbers, invalid UTF-8 — one to four of them.
    static func mutate(_ bytes: [UInt8], others: [[UInt8]], _ random: inout SplitMix64) -> [UInt8] {
        var data = bytes
        let interesting: [[UInt8]] = [
            Array("\"".utf8), Array("\\".utf8), Array("{".utf8), Array("}".utf8), Array("[".utf8), Array("]".utf8),
            Array(",".utf8), Array(":".utf8), Array("null".utf8), Array("-0.0e-9999".utf8), Array("1e400".utf8),
            Array("\\ud800".utf8), [0xC3, 0x28], [0xFF], [0x00], Array("\"id\":".utf8),
            Array("\"jsonrpc\":\"2.0\"".utf8),
        ]
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = data.isEmpty ? 0 : Int.random(in: 0...data.count, using: &random)
            switch Int.random(in: 0..<9, using: &random) {
            case 0 where !data.isEmpty:
                let index = Int.random(in: 0..<data.count, using: &random)
                data[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1: data.insert(contentsOf: interesting.randomElement(using: &random)!, at: position)
            case 2 where !data.isEmpty:
                let end = min(data.count, position + Int.random(in: 1...8, using: &random))
                data.removeSubrange(min(position, end)..<end)
            case 3: data = Array(data.prefix(position))
            case 4:
                let other = others.randomElement(using: &random)!
                let cut = Int.random(in: 0...other.count, using: &random)
                data = Array(data.prefix(position)) + other[cut...]
            case 5 where !data.isEmpty:
                let end = min(data.count, position + Int.random(in: 1...16, using: &random))
                let chunk = Array(data[min(position, end)..<end])
                data.insert(
                    contentsOf: Array(repeating: chunk, count: Int.random(in: 2...50, using: &random)).joined(),
                    at: position)
            case 6:
                let depth = Int.random(in: 1...200, using: &random)
                data =
                    Array(repeating: UInt8(ascii: "["), count: depth) + data
                    + Array(repeating: UInt8(ascii: "]"), count: depth)
            case 7:
                data.insert(
                    contentsOf: Array(repeating: UInt8(ascii: "9"), count: Int.random(in: 1...300, using: &random)),
                    at: position)
            default: data.insert(UInt8.random(in: 0...255, using: &random), at: position)
            }
        }
        return data.filter { $0 != UInt8(ascii: "\n") }
    }

    /// One JSON-RPC response, or a batch of them: `jsonrpc` "2.0", an `id`, and exactly one of `result` / `error`
    /// (an error with an integer code and a message).
    static func isWellFormedReply(_ line: String, parser: JSONParser) -> Bool {
        guard !line.contains("\n"), let value = try? parser.parse(Array(line.utf8)) else { return false }
        func response(_ value: JSONValue) -> Bool {
            guard value["jsonrpc"] == .string("2.0"), value["id"] != nil else { return false }
            switch (value["result"], value["error"]) {
            case (_?, nil): return true
            case (nil, let error?): return error["code"]?.intValue != nil && error["message"]?.stringValue != nil
            default: return false
            }
        }
        if case .array(let responses) = value { return !responses.isEmpty && responses.allSatisfy(response) }
        return response(value)
    }

    static func decodes(_ collection: SyncCollection, _ data: Data) -> Bool {
        let decoder = JSONDecoder()
        switch collection {
        case .clients: return (try? decoder.decode(ChangesPage<Client>.self, from: data)) != nil
        case .orders: return (try? decoder.decode(ChangesPage<Order>.self, from: data)) != nil
        case .devices: return (try? decoder.decode(ChangesPage<Device>.self, from: data)) != nil
        case .tickets: return (try? decoder.decode(ChangesPage<Ticket>.self, from: data)) != nil
        case .ticketMessages: return (try? decoder.decode(ChangesPage<TicketMessage>.self, from: data)) != nil
        }
    }
}
