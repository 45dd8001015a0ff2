internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// The writes of the public API: PATCH of orders and devices, and new ticket messages.
extension BackendStore {
    /// A user of the API, known by the token.
    struct User: Sendable {
        var id: String
        var name: String
    }

    /// Which fields a PATCH may change, and how each is validated.
    private enum PatchField {
        case orderStatus
        case deviceStatus
        case nullableText

        func validate(_ name: String, _ value: JSONValue) -> BackendReply? {
            switch (self, value) {
            case (.orderStatus, .string(let raw)) where OrderStatus.parse(raw).isKnown,
                (.deviceStatus, .string(let raw)) where DeviceStatus.parse(raw).isKnown:
                return nil
            case (.orderStatus, .string(let raw)), (.deviceStatus, .string(let raw)):
                return .error(422, "invalid_value", "\"\(raw)\" is not a status this server accepts", field: name)
            case (.nullableText, .null):
                return nil
            case (.nullableText, .string(let text)) where text.unicodeScalars.count <= 10_000:
                return nil
            case (.nullableText, .string):
                return .error(422, "invalid_value", "\(name) is longer than 10000 characters", field: name)
            default:
                return .error(422, "invalid_value", "\(name) must be a string, not \(value.typeName)", field: name)
            }
        }
    }

    private static func patchFields(_ collection: SyncCollection) -> [String: PatchField] {
        switch collection {
        case .orders: ["status": .orderStatus, "notes": .nullableText]
        case .devices: ["status": .deviceStatus, "diagnosis": .nullableText, "resolution": .nullableText]
        default: [:]
        }
    }

    /// `PATCH /api/v1/{orders|devices}/{id}`. `applyingValues` false is the `drop_patch_values` defect: checked and
    /// answered as usual, a new version, but the fields left as they were.
    func patch(
        _ collection: SyncCollection, id: String, body: Data, ifMatch: Int?, idempotencyKey: String?, token: String,
        fingerprint: String, applyingValues: Bool = true
    ) async throws -> BackendReply {
        let allowed = Self.patchFields(collection)
        guard !allowed.isEmpty else {
            return .error(405, "invalid_request", "\(collection.name) cannot be changed through the API")
        }
        guard let fields = JSONValue.object(from: body), !fields.isEmpty else {
            return .error(400, "invalid_request", "the body must be a JSON object with at least one field")
        }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard let field = allowed[name] else {
                return .error(
                    422, "invalid_field",
                    "\(name) cannot be changed; changeable: \(allowed.keys.sorted().joined(separator: ", "))",
                    field: name)
            }
            if let problem = field.validate(name, value) { return problem }
        }
        let applied = applyingValues ? fields : [:]
        let reply = try await pool.write { db in
            try idempotent(db, token: token, key: idempotencyKey, fingerprint: fingerprint) {
                switch collection {
                case .orders:
                    try applyPatch(Order.self, id: id, ifMatch: ifMatch, db) { order in
                        if case .string(let raw)? = applied["status"] { order.status = .parse(raw) }
                        if let notes = applied["notes"] { order.notes = notes.stringValue }
                    }
                default:
                    try applyPatch(Device.self, id: id, ifMatch: ifMatch, db) { device in
                        if case .string(let raw)? = applied["status"] { device.status = .parse(raw) }
                        if let diagnosis = applied["diagnosis"] { device.diagnosis = diagnosis.stringValue }
                        if let resolution = applied["resolution"] { device.resolution = resolution.stringValue }
                    }
                }
            }
        }
        if reply.status == 200 && !reply.replayed { counters.update { $0.patchesApplied += 1 } }
        if reply.status == 412 && !reply.replayed { counters.update { $0.versionConflicts += 1 } }
        return reply
    }

    private func applyPatch<R: StoredRecord>(
        _ type: R.Type, id: String, ifMatch: Int?, _ db: Database, change: (inout R) -> Void
    ) throws -> BackendReply {
        guard var record = try load(R.self, id: id, db) else {
            return .error(404, "not_found", "\(R.collection.name) \(id) does not exist")
        }
        if let ifMatch, ifMatch != record.version {
            let body = VersionConflictBody(
                error: APIErrorBody.Detail(
                    code: "version_mismatch",
                    message: "If-Match is \(ifMatch) but the record is at version \(record.version)"),
                current: record)
            return try .json(412, body, etag: record.version)
        }
        change(&record)
        record.version += 1
        record.updatedAt = .now()
        try save(record, db)
        return try .json(200, record, etag: record.version)
    }

    /// `POST /api/v1/tickets/{id}/messages`.
    func createMessage(
        ticketId: String, body: Data, idempotencyKey: String?, token: String, user: User, fingerprint: String
    ) async throws -> BackendReply {
        guard let fields = JSONValue.object(from: body) else {
            return .error(400, "invalid_request", "the body must be a JSON object")
        }
        for name in fields.keys.sorted() where !["id", "content", "is_internal"].contains(name) {
            return .error(422, "invalid_field", "\(name) is not a field of a new message", field: name)
        }
        guard case .string(let id)? = fields["id"], UUID(uuidString: id) != nil else {
            return .error(422, "invalid_value", "id must be a client-generated UUID", field: "id")
        }
        guard case .string(let content)? = fields["content"],
            !content.allSatisfy(\.isWhitespace), content.unicodeScalars.count <= 10_000
        else {
            return .error(
                422, "invalid_value", "content must be non-blank text of at most 10000 characters",
                field: "content")
        }
        let isInternal: Bool
        switch fields["is_internal"] {
        case nil, .null?: isInternal = false
        case .bool(let value)?: isInternal = value
        case let other?:
            return .error(
                422, "invalid_value", "is_internal must be a boolean, not \(other.typeName)",
                field: "is_internal")
        }
        let reply = try await pool.write { db in
            try idempotent(db, token: token, key: idempotencyKey, fingerprint: fingerprint) {
                guard var ticket = try load(Ticket.self, id: ticketId, db) else {
                    return .error(404, "not_found", "ticket \(ticketId) does not exist")
                }
                if let existing = try load(TicketMessage.self, id: id, db) {
                    guard existing.ticketId == ticketId, existing.content == content else {
                        return .error(409, "duplicate_id", "a different message already has the id \(id)", field: "id")
                    }
                    counters.update { $0.messageReplays += 1 }
                    return try .json(200, existing)
                }
                let now = Timestamp.now()
                let message = TicketMessage(
                    id: id, ticketId: ticketId, content: content, senderType: .staff, senderName: user.name,
                    senderId: user.id, isInternal: isInternal, createdAt: now, updatedAt: now, version: 1)
                try save(message, db)
                ticket.messageCount = (ticket.messageCount ?? 0) + 1
                ticket.lastMessageAt = now
                ticket.version += 1
                ticket.updatedAt = now
                try save(ticket, db)
                counters.update { $0.messagesCreated += 1 }
                return try .json(201, message)
            }
        }
        return reply
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
