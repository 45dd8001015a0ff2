import RepairSyncControlClient
import RepairSyncControlServer
import RepairSyncProtocol
import Testing

/// JSON-RPC 2.0 as the specification's own examples (section 7) describe it, plus this socket's limits.
@Suite("JSON-RPC dispatcher")
struct JSONRPCDispatcherTests {
    /// subtract (by name), sum, notify_hello / update (notifications), get_data, and a method that fails.
    let dispatcher = JSONRPCDispatcher<Void> { method, params, _ in
        switch method {
        case "subtract":
            let named = try SubtractParams.decode(from: params)
            return .number(named.minuend - named.subtrahend)
        case "sum":
            guard case .array(let values)? = params else {
                throw JSONRPCError.invalidParams("params", "must be an array")
            }
            return .number(values.compactMap(\.intValue).reduce(0, +))
        case "notify_hello", "update": return .null
        case "get_data": return .array([.string("hello"), .number(5)])
        case "explode": throw CancellationError()
        default: throw JSONRPCError.methodNotFound(method)
        }
    }

    func reply(_ line: String) async -> JSONValue? {
        guard let text = await dispatcher.reply(to: Array(line.utf8), context: ()) else { return nil }
        #expect(!text.contains("\n"))
        return try? JSONParser().parse(text)
    }

    func errorCode(_ reply: JSONValue?) -> Int? { reply?["error"]?["code"]?.intValue }

    @Test("a call with named params gets its result and its id back")
    func namedParams() async {
        let reply = await reply(
            #"{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}"#)
        #expect(reply?["result"] == .number(19))
        #expect(reply?["id"] == .number(3))
        #expect(reply?["jsonrpc"] == .string("2.0"))
    }

    @Test("a notification gets no reply, even when its method does not exist or fails")
    func notifications() async {
        #expect(await reply(#"{"jsonrpc":"2.0","method":"update","params":{}}"#) == nil)
        #expect(await reply(#"{"jsonrpc":"2.0","method":"foobar"}"#) == nil)
        #expect(await reply(#"{"jsonrpc":"2.0","method":"explode"}"#) == nil)
    }

    @Test("error codes: parse error, invalid request, method not found, invalid params naming the param, internal")
    func errorCodes() async {
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#)) == -32700)
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#)) == -32600)
        #expect(errorCode(await reply(#"{"jsonrpc":"1.0","method":"sum","id":1}"#)) == -32600)
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":"sum","params":3,"id":1}"#)) == -32600)
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":"sum","id":{"a":1}}"#)) == -32600)
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":"foobar","id":"1"}"#)) == -32601)
        let invalid = await reply(
            #"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":"x","subtrahend":1},"id":2}"#)
        #expect(errorCode(invalid) == -32602)
        #expect(invalid?["error"]?["data"]?["param"] == .string("minuend"))
        let unknown = await reply(
            #"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":1,"extra":0},"id":2}"#)
        #expect(unknown?["error"]?["data"]?["param"] == .string("extra"))
        let failing = await reply(#"{"jsonrpc":"2.0","method":"explode","id":9}"#)
        #expect(errorCode(failing) == -32603)
        #expect(failing?["id"] == .number(9))
    }

    @Test("batches: mixed results and errors, notifications left out, empty and junk batches, all-notification batches")
    func batches() async {
        let mixed = await reply(
            #"""
            [{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]},
             {"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":"2"},{"foo":"boo"},
             {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},{"jsonrpc":"2.0","method":"get_data","id":"9"}]
            """#)
        guard case .array(let replies)? = mixed else {
            Issue.record("not an array: \(String(describing: mixed))")
            return
        }
        #expect(replies.count == 5)
        #expect(replies[0]["result"] == .number(7))
        #expect(replies[1]["result"] == .number(19))
        #expect(errorCode(replies[2]) == -32600)
        #expect(errorCode(replies[3]) == -32601)
        #expect(replies[4]["result"] == .array([.string("hello"), .number(5)]))

        #expect(errorCode(await reply("[]")) == -32600)
        guard case .array(let junk)? = await reply("[1,2,3]") else {
            Issue.record("junk batch")
            return
        }
        #expect(junk.count == 3)
        #expect(junk.allSatisfy { errorCode($0) == -32600 })
        #expect(await reply(#"[{"jsonrpc":"2.0","method":"notify_hello"},{"jsonrpc":"2.0","method":"update"}]"#) == nil)
        let tooMany =
            "[" + Array(repeating: #"{"jsonrpc":"2.0","method":"update"}"#, count: 101).joined(separator: ",") + "]"
        #expect(errorCode(await reply(tooMany)) == -32600)
    }

    @Test("a batch's calls run concurrently, and their replies keep the order of the requests", .timeLimit(.minutes(1)))
    func batchConcurrency() async {
        // Each `meet` returns true once all three have started: a dispatcher that ran a batch one call after another
        // would never start the second, and the time limit fails the test (the waiting call then answers false).
        let meeting = Meeting(expected: 3)
        let dispatcher = JSONRPCDispatcher<Void> { method, params, _ in
            guard method == "meet", case .array(let values)? = params, let name = values.first else {
                throw JSONRPCError.methodNotFound(method)
            }
            return .array([name, .bool(await meeting.arrive())])
        }
        let line = (1...3).map { #"{"jsonrpc":"2.0","method":"meet","params":["n\#($0)"],"id":\#($0)}"# }
        let text = await dispatcher.reply(to: Array(("[" + line.joined(separator: ",") + "]").utf8), context: ())
        guard case .array(let replies)? = text.flatMap({ try? JSONParser().parse($0) }) else {
            Issue.record("not a batch reply: \(String(describing: text))")
            return
        }
        #expect(replies.map { $0["id"] } == [.number(1), .number(2), .number(3)])
        let results = replies.map { reply -> [JSONValue] in
            if case .array(let pair)? = reply["result"] { return pair }
            return []
        }
        #expect(results.map(\.first) == [.string("n1"), .string("n2"), .string("n3")])
        #expect(results.allSatisfy { $0.last == .bool(true) }, "every call met the others: \(replies)")
    }

    @Test("hostile lines get an error reply with id null: deep nesting, huge numbers, duplicate keys, bad UTF-8")
    func hostile() async {
        #expect(errorCode(await reply(String(repeating: "[", count: 100_000))) == -32600)
        #expect(
            errorCode(
                await reply(#"{"jsonrpc":"2.0","method":"sum","id":"# + String(repeating: "9", count: 5000) + "}"))
                == -32600)
        #expect(errorCode(await reply(#"{"jsonrpc":"2.0","method":"sum","id":1,"id":2}"#)) == -32600)
        let badUTF8 = await dispatcher.reply(to: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], context: ())
        #expect(badUTF8.flatMap { try? JSONParser().parse($0) }.map(errorCode) == -32700)
        #expect(await reply(#"{"jsonrpc":"2.0","method":"sum","id":1,"id":2}"#)?["id"] == .null)
    }
}

/// The specification's `subtract` by name.
struct SubtractParams: ControlParams {
    var minuend: Int
    var subtrahend: Int

    enum CodingKeys: String, CodingKey, CaseIterable {
        case minuend, subtrahend
    }
}

/// Calls that wait for one another: `arrive` returns true once `expected` calls arrived, false if its task is
/// cancelled first.
actor Meeting {
    let expected: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Bool, Never>] = []

    init(expected: Int) { self.expected = expected }

    func arrive() async -> Bool {
        arrived += 1
        if arrived >= expected {
            release(true)
            return true
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled { continuation.resume(returning: false) } else { waiting.append(continuation) }
            }
        } onCancel: {
            Task { await self.release(false) }
        }
    }

    private func release(_ met: Bool) {
        for continuation in waiting { continuation.resume(returning: met) }
        waiting.removeAll()
    }
}
