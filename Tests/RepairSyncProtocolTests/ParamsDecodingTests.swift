import RepairSyncProtocol
import Testing

/// Params as the daemon reads them: the catalogue's types, strict, with errors that name the parameter.
@Suite("Params decoding")
struct ParamsDecodingTests {
    func refusal<P: ControlParams>(_ type: P.Type, _ params: JSONValue?) -> JSONRPCError? {
        do {
            _ = try P.decode(from: params)
            return nil
        } catch {
            return error
        }
    }

    @Test("absent, null, {} and [] are no params; positional params are refused")
    func emptyForms() throws {
        for empty in [nil, JSONValue.null, .object([]), .array([])] {
            #expect(try NoParams.decode(from: empty) == NoParams())
        }
        let positional = refusal(RPC.GetClient.Params.self, .array([.string("cli_1")]))
        #expect(positional?.kind == .invalidParams)
        #expect(positional?.data?["param"] == .string("params"))
    }

    @Test("an unknown name is refused with the known ones; so is any name for a method that takes none")
    func unknownNames() {
        let typo = refusal(RPC.Sync.Params.self, .object([("colections", .array([]))]))
        #expect(typo?.code == -32602)
        #expect(typo?.data?["param"] == .string("colections"))
        #expect(typo?.message.contains("known: collections, wait") == true)
        let none = refusal(NoParams.self, .object([("verbose", .bool(true))]))
        #expect(none?.message.contains("this method takes none") == true)
    }

    @Test("a wrong type, a missing value and a null for a required one name the parameter")
    func types() {
        let wrong = refusal(RPC.GetClient.Params.self, .object([("id", .number(7))]))
        #expect(wrong?.data?["param"] == .string("id"))
        #expect(wrong?.message == "Invalid params: id must be a string, not a number")
        let missing = refusal(RPC.GetClient.Params.self, .object([]))
        #expect(missing?.message == "Invalid params: id is required")
        let null = refusal(RPC.GetClient.Params.self, .object([("id", .null)]))
        #expect(null?.data?["param"] == .string("id"))
        let nested = refusal(RPC.Retry.Params.self, .object([("ids", .array([.number(1), .string("2")]))]))
        #expect(nested?.data?["param"] == .string("ids"))
        #expect(nested?.message.contains("[1]") == true)
    }

    @Test("a value outside an enum lists the values it takes")
    func enums() {
        let kind = refusal(
            RPC.QueueChange.Params.self, .object([("kind", .string("order-teleported")), ("id", .string("o"))]))
        #expect(
            kind?.message
                == #"Invalid params: kind must be one of order-updated, device-updated, ticket-message-created, client-created, order-created, device-created, not "order-teleported""#
        )
        let collection = refusal(RPC.Sync.Params.self, .object([("collections", .array([.string("orderz")]))]))
        #expect(collection?.data?["param"] == .string("collections"))
        #expect(
            collection?.message.contains("must be one of clients, orders, devices, tickets, ticket_messages") == true)
        let state = refusal(RPC.Pending.Params.self, .object([("state", .string("parked"))]))
        #expect(state?.message.contains("must be one of pending, in_flight, failed, dead, held") == true)
    }

    @Test("ranges and one-of rules are checked after decoding")
    func validation() {
        #expect(
            refusal(RPC.ListOrders.Params.self, .object([("limit", .number(0))]))?.data?["param"] == .string("limit"))
        #expect(refusal(RPC.ListOrders.Params.self, .object([("limit", .number(1000))])) == nil)
        #expect(
            refusal(RPC.ListOrders.Params.self, .object([("offset", .number(-1))]))?.data?["param"] == .string("offset")
        )
        #expect(refusal(RPC.GetOrder.Params.self, .object([]))?.data?["param"] == .string("id"))
        #expect(refusal(RPC.GetOrder.Params.self, .object([("id", .string("o")), ("orderNumber", .number(1))])) != nil)
        #expect(
            refusal(RPC.UpdateOrder.Params.self, .object([("id", .string("o"))]))?.data?["param"]
                == .string("status/notes"))
        #expect(
            refusal(RPC.ResolveConflict.Params.self, .object([("id", .number(0)), ("keep", .string("local"))])) != nil)
    }

    @Test("a field left out is not changed; null clears it; a string sets it — and they encode back the same")
    func fieldChanges() throws {
        let params = try RPC.UpdateOrder.Params.decode(from: .object([("id", .string("ord_1")), ("notes", .null)]))
        #expect(params.status == nil)
        #expect(params.notes == .clear)
        #expect(params.fields.count == 1)
        #expect(params.fields["notes"] == .some(.none), "present, and cleared")
        #expect(try params.encoded() == .object([("id", .string("ord_1")), ("notes", .null)]))
        let set = RPC.UpdateDevice.Params(id: "dev_1", diagnosis: .set("screen"))
        #expect(try set.encoded()?.serialized == #"{"id":"dev_1","diagnosis":"screen"}"#)
        #expect(try RPC.UpdateDevice.Params.decode(from: set.encoded()) == set)
    }

    @Test("keep is \"local\", \"remote\" or a choice per field")
    func conflictChoice() throws {
        func keep(_ value: JSONValue) throws -> ConflictChoice {
            try RPC.ResolveConflict.Params.decode(from: .object([("id", .number(3)), ("keep", value)])).keep
        }
        #expect(try keep(.string("local")) == .keepLocal)
        #expect(try keep(.string("remote")) == .keepRemote)
        #expect(try keep(.object([("notes", .string("remote"))])) == .perField(["notes": .remote]))
        let wrong = refusal(RPC.ResolveConflict.Params.self, .object([("id", .number(3)), ("keep", .string("mine"))]))
        #expect(wrong?.data?["param"] == .string("keep"))
        #expect(wrong?.message.contains(#""local", "remote""#) == true)
    }

    @Test("a client validates before sending: the same rules, the same errors")
    func clientSide() {
        #expect(throws: JSONRPCError.self) { try RPC.ListTickets.Params(limit: 5000).validate() }
        #expect(throws: Never.self) { try RPC.ListTickets.Params(limit: 10).validate() }
    }
}
