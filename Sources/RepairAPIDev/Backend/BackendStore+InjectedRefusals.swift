internal import Foundation
internal import GRDB

/// The injected `422` fault on a write, refused as a server refuses a value it does not accept.
extension BackendStore {
    /// `422 invalid_value`, without applying anything — and, as docs/api.md section 5 says of every 422, a final
    /// answer remembered under the request's `Idempotency-Key`: the same key replays the refusal, only a new request
    /// (a new key) is processed afresh. A key already answered replays its first answer instead.
    func refuseInjected(idempotencyKey: String?, token: String, fingerprint: String) async throws -> BackendReply {
        try await pool.write { db in
            try idempotent(db, token: token, key: idempotencyKey, fingerprint: fingerprint) {
                .error(422, "invalid_value", "injected fault: value refused", field: "notes")
            }
        }
    }
}
