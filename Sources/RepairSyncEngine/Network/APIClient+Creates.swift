public import Foundation
public import RepairSyncModels

extension APIClient {
    /// `POST /api/v1/{clients|orders|devices}` (docs/api.md section 4.7): a new record with its client-generated
    /// id in `body`, under `key`. 201 (created) and 200 (the same id and body again) both answer the record.
    public func create(_ collection: SyncCollection, body: Data, key: String) async throws(APIError) -> Reply {
        try await send("POST", "/api/v1/\(collection.name)", json: body, headers: [("Idempotency-Key", key)])
    }
}
