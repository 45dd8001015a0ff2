internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// Writes of the admin surface: what another user or another system would do to the server's data.
extension BackendStore {
    /// Changes any fields of a record (except its identity and write stamps) as another user would.
    func adminEdit(_ collection: SyncCollection, id: String, body: Data) async throws -> BackendReply {
        guard let changes = JSONValue.object(from: body), !changes.isEmpty else {
            return .error(400, "invalid_request", "the body must be a JSON object of fields to change")
        }
        for name in ["id", "version", "created_at", "updated_at"] where changes[name] != nil {
            return .error(422, "invalid_field", "\(name) is set by the server", field: name)
        }
        return try await pool.write { db in
            guard
                let stored = try Data.fetchOne(
                    db, sql: "SELECT body FROM records WHERE collection = ? AND id = ?",
                    arguments: [collection.name, id]),
                let current = JSONValue.object(from: stored)
            else { return .error(404, "not_found", "\(collection.name) \(id) does not exist") }
            for name in changes.keys.sorted() where current[name] == nil {
                return .error(422, "invalid_field", "\(name) is not a field of \(collection.name)", field: name)
            }
            let merged = current.merging(changes) { _, new in new }
            return try self.resave(collection.storedType, merged: merged, db)
        }
    }

    private func resave<R: StoredRecord>(_ type: R.Type, merged: [String: JSONValue], _ db: Database) throws
        -> BackendReply
    {
        var record: R
        do {
            record = try BackendJSON.decoder().decode(R.self, from: BackendJSON.encoder().encode(merged))
        } catch {
            return .error(422, "invalid_value", "the edited record does not decode: \(error)")
        }
        record.version += 1
        record.updatedAt = .now()
        try save(record, db)
        return try .json(200, record, etag: record.version)
    }

    /// Creates a record from its full JSON; the server sets version 1 and updated_at.
    func adminCreate(_ collection: SyncCollection, body: Data) async throws -> BackendReply {
        try await create(collection.storedType, body: body)
    }

    private func create<R: StoredRecord>(_ type: R.Type, body: Data) async throws -> BackendReply {
        let decoded: R
        do {
            decoded = try BackendJSON.decoder().decode(R.self, from: body)
        } catch {
            return .error(422, "invalid_value", "the record does not decode as \(R.collection.name): \(error)")
        }
        return try await pool.write { db in
            var record = decoded
            if try load(R.self, id: record.id, db) != nil {
                return .error(409, "duplicate_id", "\(R.collection.name) \(record.id) already exists", field: "id")
            }
            record.version = 1
            record.updatedAt = .now()
            try save(record, db)
            return try .json(201, record, etag: 1)
        }
    }

    /// Puts a record back as it was at some earlier point — its full JSON, `version` and `updated_at` included, even a
    /// version lower than the current one — as a restore from a backup would. With `inFeed` it moves to the end of
    /// its changes feed (clients see it on their next pull); without, it keeps its place (they find out only when
    /// they write it). Any tombstone of its id goes.
    func adminRestore(_ collection: SyncCollection, id: String, body: Data, inFeed: Bool) async throws -> BackendReply {
        try await restore(collection.storedType, id: id, body: body, inFeed: inFeed)
    }

    private func restore<R: StoredRecord>(_ type: R.Type, id: String, body: Data, inFeed: Bool) async throws
        -> BackendReply
    {
        let record: R
        do {
            record = try BackendJSON.decoder().decode(R.self, from: body)
        } catch {
            return .error(422, "invalid_value", "the record does not decode as \(R.collection.name): \(error)")
        }
        guard record.id == id else { return .error(422, "invalid_value", "the body's id is not \(id)", field: "id") }
        return try await pool.write { db in
            let place = try Int64.fetchOne(
                db, sql: "SELECT seq FROM records WHERE collection = ? AND id = ?", arguments: [R.collection.name, id])
            if !inFeed, place == nil {
                return .error(404, "not_found", "\(R.collection.name) \(id) does not exist to keep its place")
            }
            try save(record, db, sequence: inFeed ? nil : place)
            return try .json(200, record, etag: record.version)
        }
    }

    /// Deletes a record and its children, each leaving a tombstone.
    func adminDelete(_ collection: SyncCollection, id: String) async throws -> BackendReply {
        struct Deleted: Encodable {
            var collection: String
            var id: String
        }
        let deleted = try await pool.write { db in try delete(collection, id: id, db) }
        guard !deleted.isEmpty else { return .error(404, "not_found", "\(collection.name) \(id) does not exist") }
        return try .json(200, ["deleted": deleted.map { Deleted(collection: $0.0.name, id: $0.1) }])
    }
}
