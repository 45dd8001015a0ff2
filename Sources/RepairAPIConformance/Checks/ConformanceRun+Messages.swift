internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// 4.5 and 5 on a ticket: one staff-only message, POSTed three times with one client-generated id.
extension ConformanceRun {
    /// Returns what the ticket was left with.
    func messageScenario(ticket: String) async -> String {
        let create = CheckID(clause: "message-create")
        let dedupe = CheckID(clause: "message-dedupe")
        let inFeed = CheckID(clause: "message-in-feed")
        let replayCheck = CheckID(clause: "idempotent-replay", collection: .ticketMessages)
        let ticketTail = await tailCursor(.tickets)
        let messageTail = await tailCursor(.ticketMessages)
        guard case .success(let before) = await currentRecord(.tickets, ticket),
            let v0 = before["version"]?.intValue
        else {
            for id in [create, dedupe, inFeed, replayCheck]
                + Self.messageClauses.dropFirst(3).map({ CheckID(clause: $0) })
            {
                findings.skip(id, "ticket \(ticket) cannot be read")
            }
            return "nothing written: the ticket cannot be read"
        }
        let count0 = before["message_count"]?.intValue

        let messageID = UUID().uuidString.lowercased()
        let content = "repair-api-conformance \(runID): a staff-only check note; safe to ignore."
        let body = messageBody(messageID, content)

        // 4.5: 201 with the message.
        let key = nextKey()
        let first = await client.call { api throws(APIError) in
            _ = try await api.postMessage(ticketId: ticket, body: body, key: key)
        }.exchange
        guard first.status == 201, let created = try? JSONText.parse(first.body) else {
            findings.problem(create, "\(first.requestLine) \(first.answer), not 201")
            for id in [dedupe, inFeed, replayCheck] { findings.skip(id, "the message was not created") }
            await messageRefusals(ticket: ticket, existing: nil)
            return "POST answered \(first.status.map { String($0) } ?? "nothing"): no message was created"
        }
        inspector.inspect(created, of: .ticketMessages, origin: first.requestLine)
        if let problem = DaemonDecoding.recordProblem(.ticketMessages, first.body) {
            findings.problem(create, "the daemon cannot decode the new message: \(problem)")
        } else {
            let expected: [(String, JSONValue)] = [
                ("id", .string(messageID)), ("ticket_id", .string(ticket)), ("content", .string(content)),
                ("sender_type", .string("staff")), ("is_internal", .bool(true)), ("version", .number("1")),
            ]
            let wrong = expected.filter { key, value in !(created[key].map { JSONText.same($0, value) } ?? false) }
            if wrong.isEmpty {
                findings.examined(create)
                findings.summary(create, "201 with message \(messageID): sender_type staff, version 1")
            } else {
                findings.problem(
                    create,
                    "the created message has "
                        + wrong.map { "\($0.0) \(created[$0.0]?.brief ?? "absent")" }
                        .joined(separator: ", ") + ", not what was sent")
            }
        }

        // 5: the same POST and key → the original 201 and body, replayed.
        let replay = await client.call { api throws(APIError) in
            _ = try await api.postMessage(ticketId: ticket, body: body, key: key)
        }.exchange
        judgeReplay(first, replay, replayCheck)

        // 4.5: the same message under another key → 200 with the existing message; one message, one ticket write.
        let again = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.postMessage(ticketId: ticket, body: body, key: key)
        }.exchange
        if again.status == 200, let existing = try? JSONText.parse(again.body),
            ["id", "ticket_id", "content", "created_at", "version"].allSatisfy({ key in
                existing[key].map { value in created[key].map { JSONText.same(value, $0) } ?? false } ?? false
            })
        {
            findings.examined(dedupe)
        } else {
            findings.problem(
                dedupe,
                "\(again.requestLine) with the same id under another key \(again.answer), not 200 with the message")
        }
        if case .success(let after) = await currentRecord(.tickets, ticket) {
            let version = after["version"]?.intValue ?? 0
            let count = after["message_count"]?.intValue
            if version != v0 + 1 {
                findings.problem(
                    dedupe,
                    "ticket \(ticket) went from version \(v0) to \(version), not \(v0 + 1): one message is one write")
            } else if let count0, count != count0 + 1 {
                findings.problem(
                    dedupe,
                    "ticket \(ticket) message_count went from \(count0) to \(count.map { String($0) } ?? "null"), not \(count0 + 1)"
                )
            } else {
                findings.summary(
                    dedupe, "200 with the same message; the ticket went to version \(v0 + 1), one message more")
            }
        }

        // 4.5: the message and the ticket it wrote are in their feeds, after the cursors that preceded them.
        if let messageTail, let ticketTail {
            let messages = await records(after: messageTail, in: .ticketMessages)
            let tickets = await records(after: ticketTail, in: .tickets)
            let copies = messages?.filter { $0["id"]?.stringValue == messageID }.count ?? 0
            let ticketEntry = tickets?.last(where: { $0["id"]?.stringValue == ticket })
            if messages == nil || tickets == nil {
                findings.problem(inFeed, "the feeds after the cursors that preceded the POST could not be read")
            } else if copies != 1 {
                findings.problem(
                    inFeed,
                    "the ticket_messages feed after the POST holds message \(messageID) \(copies) times, not once")
            } else if ticketEntry == nil {
                findings.problem(inFeed, "the tickets feed after the POST does not hold ticket \(ticket)")
            } else if let count0, (ticketEntry?["message_count"]?.intValue ?? 0) <= count0 {
                findings.problem(
                    inFeed,
                    "ticket \(ticket) is in the feed with message_count \(ticketEntry?["message_count"]?.brief ?? "?"), not above \(count0)"
                )
            } else {
                findings.examined(inFeed)
                findings.summary(
                    inFeed,
                    "message \(messageID) once in ticket_messages, ticket \(ticket) at version \(ticketEntry?["version"]?.brief ?? "?") in tickets"
                )
            }
        } else {
            findings.skip(inFeed, "the feeds could not be read to their end before the POST")
        }
        // 4.5: what the contract refuses, the same id with other content among it (after the checks above, so that a
        // server that wrongly takes one does not make them fail too).
        await messageRefusals(ticket: ticket, existing: (messageID, content))
        return "message \(messageID) added; it stays (the API deletes no message) and is staff-only"
    }
}
