import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl queue order-updated <id>...`: tell the daemon another program changed records.
struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract:
            "Queue a change another program made in the store (order-updated, device-updated, ticket-message-created, client-created, order-created, device-created).",
        discussion:
            "Several ids of one kind are queued together (JSON-RPC batches of up to 100, whose changes share commits); one line each. Exit status 1 if any call failed (an unknown id) or any row's creation is dead, refused by the server or given up on (retry or discard it: repairctl pending --failed)."
    )

    @OptionGroup var options: GlobalOptions
    @Argument(help: "What changed.") var kind: ChangeKind
    @Argument(help: "The records' ids.") var ids: [String]

    func run() throws {
        guard ids.count > 1 else { return try queueOne(ids[0]) }
        let client = try options.connect()
        var outcomes: [(id: String, outcome: Result<RPC.QueueChange.Result, JSONRPCError>)] = []
        for start in stride(from: 0, to: ids.count, by: JSONRPCMessage.maxBatch) {
            let chunk = Array(ids[start..<min(start + JSONRPCMessage.maxBatch, ids.count)])
            let replies: [Result<RPC.QueueChange.Result, JSONRPCError>]
            do {
                replies = try client.callBatch(RPC.QueueChange.self, chunk.map { .init(kind: kind, id: $0) })
            } catch {
                throw GlobalOptions.exit(error)
            }
            outcomes += zip(chunk, replies).map { ($0, $1) }
        }
        if options.json {
            let items: [JSONValue] = try outcomes.map { id, outcome in
                switch outcome {
                case .success(let result):
                    .object(["id": .string(id), "result": try JSONValueEncoder().encode(result)])
                case .failure(let error): .object(["id": .string(id), "error": error.json])
                }
            }
            Output.json(JSONValue.array(items).serialized)
        } else {
            for (id, outcome) in outcomes {
                switch outcome {
                case .success(let result) where result.outcome == .dead:
                    Output.error(describe(result, id: id))
                case .success(let result): Output.line(TerminalText(describe(result, id: id)))
                case .failure(let error): Output.error("\(id): \(error.message)")
                }
            }
        }
        let failed = outcomes.contains {
            switch $0.outcome {
            case .success(let result): result.outcome == .dead
            case .failure: true
            }
        }
        if failed { throw ExitCode.failure }
    }

    private func queueOne(_ id: String) throws {
        let reply = try options.call(RPC.QueueChange.self, .init(kind: kind, id: id))
        let dead = reply.result.outcome == .dead
        if !options.printJSONIfAsked(reply.json) {
            let line = describe(reply.result, id: id, alone: true)
            if dead { Output.error(line) } else { Output.line(TerminalText(line)) }
        }
        // The row's change will not reach the server until someone retries or discards it: a script must notice.
        if dead { throw ExitCode.failure }
    }

    private func describe(_ result: RPC.QueueChange.Result, id: String, alone: Bool = false) -> String {
        if result.queued {
            let already = result.reason.map { " — \($0)" } ?? ""
            return
                "queued \(kind.rawValue) \(id) (\((result.fields ?? []).joined(separator: ", ")))\(already); \(result.pending) pending"
        }
        // A dead change's reason names it, to retry or discard.
        let what = result.outcome == .dead ? "" : "nothing to queue: "
        return "\(alone ? "" : "\(id): ")\(what)\(result.reason ?? "")"
    }
}
