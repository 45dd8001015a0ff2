/// The body of every error response: `{"error":{"code":"...","message":"...","field":"..."}}`.
///
/// A 412 also carries the record as the server has it now, in `current`, so that the client can resolve the
/// conflict without another request. Decode `current` separately with the collection's record type.
public struct APIErrorBody: Codable, Hashable, Sendable {
    public var error: Detail

    public init(code: String, message: String, field: String? = nil) {
        self.error = Detail(code: code, message: message, field: field)
    }

    public struct Detail: Codable, Hashable, Sendable {
        /// A stable, machine-readable code: `invalid_request`, `invalid_value`, `unauthorized`, `forbidden`,
        /// `not_found`, `version_mismatch`, `idempotency_key_reused`, `cursor_expired`, `rate_limited`, `internal`.
        public var code: String
        /// A sentence for people.
        public var message: String
        /// The request field at fault, for 400 and 422.
        public var field: String?

        public init(code: String, message: String, field: String? = nil) {
            self.code = code
            self.message = message
            self.field = field
        }
    }
}

/// A 412 response body: the error and the record as the server has it now.
public struct VersionConflictBody<Record: SyncRecord>: Codable, Sendable {
    public var error: APIErrorBody.Detail
    public var current: Record

    public init(error: APIErrorBody.Detail, current: Record) {
        self.error = error
        self.current = current
    }
}

/// `GET /api/v1/health`.
public struct HealthStatus: Codable, Hashable, Sendable {
    public var status: String
    public var time: Timestamp

    public init(status: String, time: Timestamp) {
        self.status = status
        self.time = time
    }
}
