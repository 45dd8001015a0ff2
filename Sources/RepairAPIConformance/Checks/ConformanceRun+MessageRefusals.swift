internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The message POSTs 4.5 refuses, on the ticket the run writes to (or one no server holds). None writes on a
/// conforming server; each is followed by reads that show nothing was made and the ticket was not written.
extension ConformanceRun {
    /// `existing`: the message the run created on the ticket, when it did (for the duplicate id).
    func messageRefusals(ticket: String, existing: (id: String, content: String)?) async {
        let invalid = CheckID(clause: "message-invalid-value")
        let missing = CheckID(clause: "message-not-found")
        let duplicate = CheckID(clause: "message-duplicate")

        // 4.5: an id that is not a UUID, blank content → 422 invalid_value naming it; no message, no ticket write.
        if selected(invalid) {
            let fresh = UUID().uuidString.lowercased()
            let cases: [(id: String, content: String, field: String, what: String)] = [
                (
                    "repair-api-conformance-\(runID)-not-a-uuid", "repair-api-conformance \(runID): refused", "id",
                    "an id that is not a UUID"
                ),
                (fresh, "   ", "content", "blank content"),
            ]
            for refused in cases {
                await refusedMessage(
                    invalid, ticket: ticket, id: refused.id, content: refused.content, status: 422,
                    code: "invalid_value",
                    field: refused.field, what: refused.what)
            }
            if !findings.hasProblems(invalid) {
                findings.summary(
                    invalid,
                    "422 invalid_value naming id (not a UUID) and content (blank); no message, the ticket not written")
            }
        }

        // 4.5: a ticket that does not exist → 404 not_found; no message under the id.
        if selected(missing) {
            let id = UUID().uuidString.lowercased()
            let (exchange, _) = await client.call {
                [key = nextKey(), body = messageBody(id, "repair-api-conformance \(runID): refused")]
                api throws(APIError) in
                _ = try await api.postMessage(ticketId: unknownRecordID, body: body, key: key)
            }
            if judgeFieldError(exchange, missing, status: 404, code: "not_found", field: nil) {
                await expectAbsent(.ticketMessages, id, missing, after: exchange.requestLine)
            }
            if !findings.hasProblems(missing) {
                findings.summary(missing, "404 not_found for a message to ticket \(unknownRecordID); no message made")
            }
        }

        // 4.5: the run's message id with other content → 409 duplicate_id; the message and the ticket unchanged.
        if selected(duplicate) {
            guard let existing else {
                findings.skip(duplicate, "the run created no message whose id to send again")
                return
            }
            await refusedMessage(
                duplicate, ticket: ticket, id: existing.id, content: existing.content + " (other content)", status: 409,
                code: "duplicate_id", field: nil, what: "the id of the run's message with other content", fresh: false)
            let (now, _) = await client.call { api throws(APIError) in
                _ = try await api.record(.ticketMessages, id: existing.id)
            }
            let content = (try? JSONText.parse(now.body))?["content"]?.stringValue
            if now.status != 200 || content != existing.content {
                findings.problem(
                    duplicate,
                    "after the refused duplicate, \(now.requestLine) \(now.status == 200 ? "has content \(content.map { "\"\($0)\"" } ?? "absent")" : now.answer), not the message as created"
                )
            }
            if !findings.hasProblems(duplicate) {
                findings.summary(
                    duplicate,
                    "409 duplicate_id for message \(existing.id) with other content; it and its ticket unchanged")
            }
        }
    }

    /// The daemon's own type and encoder, as `replyToTicket` sends a message (staff-only, so a server that wrongly
    /// takes one shows it to no client).
    func messageBody(_ id: String, _ content: String) -> Data {
        (try? JSONEncoder().encode(NewTicketMessage(id: id, content: content, isInternal: true))) ?? Data()
    }

    /// One message POST to `ticket` that the contract refuses: the error it names; the ticket still at its version and,
    /// for an id that was new, no message under it.
    private func refusedMessage(
        _ check: CheckID, ticket: String, id: String, content: String, status: Int, code: String, field: String?,
        what: String, fresh: Bool = true
    ) async {
        guard let before = await version(.tickets, ticket) else {
            findings.problem(check, "ticket \(ticket) cannot be read before the POST (\(what))")
            return
        }
        let (exchange, _) = await client.call {
            [key = nextKey(), body = messageBody(id, content)] api throws(APIError) in
            _ = try await api.postMessage(ticketId: ticket, body: body, key: key)
        }
        let labelled = exchange.labelled(what)
        guard judgeFieldError(labelled, check, status: status, code: code, field: field) else { return }
        await expectVersion(.tickets, ticket, before, check, after: "the refused POST (\(what))")
        if fresh, UUID(uuidString: id) != nil {
            await expectAbsent(.ticketMessages, id, check, after: labelled.requestLine)
        }
    }
}
