internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import RepairSyncModels

/// The public API of docs/api.md.
struct APIRoutes {
    let store: BackendStore
    let injector: FaultInjector
    /// Read by PATCH alone (`drop_patch_values`); the other defects act in `DefectMiddleware`.
    let defects: DefectSwitches

    func register(on router: Router<DevRequestContext>) {
        let api = router.group("api/v1")
        api.get("health") { _, _ in
            try BackendReply.json(200, HealthStatus(status: "ok", time: Timestamp(injector.serverNow))).response()
        }
        api.get("dashboard/stats") { request, context in
            let name = request.uri.queryParameters.get("period") ?? "today"
            guard let period = BackendStore.DashboardPeriod(rawValue: name) else {
                return BackendReply.error(
                    400, "invalid_request", "period must be today, week or month", field: "period"
                )
                .response(fault: context.responseFault)
            }
            return try BackendReply.json(200, try await store.dashboard(period)).response(fault: context.responseFault)
        }
        api.get(":collection/changes") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return Self.unknownCollection(context)
            }
            var limit = 500
            if let text = request.uri.queryParameters.get("limit") {
                guard let value = Int(text), (1...1000).contains(value) else {
                    return BackendReply.error(
                        400, "invalid_request", "limit must be an integer within 1...1000",
                        field: "limit"
                    ).response(fault: context.responseFault)
                }
                limit = value
            }
            let cursor = request.uri.queryParameters.get("cursor").map { String($0) }
            if let damaged = try await store.damagedChangesPage(
                collection, cursor: cursor, limit: limit, fault: context.responseFault)
            {
                return damaged.response()
            }
            let reply = try await store.changesPage(collection, cursor: cursor, limit: limit)
            if reply.status == 200 { store.rememberFirstPage(collection, reply.body) }
            if reply.status == 200, context.responseFault == nil {
                store.counters.pageServed(collection: collection.name, cursor: cursor)
            }
            return reply.response(fault: context.responseFault)
        }
        api.get(":collection/:id") { _, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return Self.unknownCollection(context)
            }
            let id = context.parameters.get("id") ?? ""
            guard let body = try await store.recordBody(collection, id: id) else {
                return BackendReply.error(404, "not_found", "\(collection.name) \(id) does not exist")
                    .response(fault: context.responseFault)
            }
            return BackendReply(status: 200, body: body).response(fault: context.responseFault)
        }
        api.patch(":collection/:id") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return Self.unknownCollection(context)
            }
            let id = context.parameters.get("id") ?? ""
            let body = try await Self.body(of: request, context)
            if context.responseFault == .versionMismatch, let current = try await store.recordBody(collection, id: id) {
                var conflict = Data(
                    #"{"error":{"code":"version_mismatch","message":"injected fault: version refused"},"current":"#.utf8
                )
                conflict.append(current)
                conflict.append(UInt8(ascii: "}"))
                return BackendReply(status: 412, body: conflict).response()
            }
            if context.responseFault == .cachedAnswer, let current = try await store.recordBody(collection, id: id) {
                return BackendReply(status: 200, body: current).response()
            }
            let ifMatch: Int?
            switch Self.parseIfMatch(request.headers[.ifMatch]) {
            case .success(let value): ifMatch = value
            case .failure(let reply): return reply.response(fault: context.responseFault)
            }
            let key: String?
            switch Self.parseIdempotencyKey(request.headers[.idempotencyKey]) {
            case .success(let value): key = value
            case .failure(let reply): return reply.response(fault: context.responseFault)
            }
            return try await write(request, body: body, key: key, context) { fingerprint in
                try await store.patch(
                    collection, id: id, body: body, ifMatch: ifMatch, idempotencyKey: key, token: context.token ?? "",
                    fingerprint: fingerprint, applyingValues: !defects.isOn(.dropPatchValues))
            }
        }
        api.post(":collection") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return Self.unknownCollection(context)
            }
            let body = try await Self.body(of: request, context)
            let key: String?
            switch Self.parseIdempotencyKey(request.headers[.idempotencyKey]) {
            case .success(let value): key = value
            case .failure(let reply): return reply.response(fault: context.responseFault)
            }
            return try await write(request, body: body, key: key, context) { fingerprint in
                try await store.createNew(
                    collection, body: body, idempotencyKey: key, token: context.token ?? "", fingerprint: fingerprint)
            }
        }
        // Registered under `:collection` rather than a literal `tickets`: the router does not backtrack, and a
        // literal would hide `GET /tickets/{id}`.
        api.post(":collection/:id/messages") { request, context in
            guard context.parameters.get("collection") == SyncCollection.tickets.name else {
                return Self.unknownRoute(context)
            }
            let ticketId = context.parameters.get("id") ?? ""
            let body = try await Self.body(of: request, context)
            let key: String?
            switch Self.parseIdempotencyKey(request.headers[.idempotencyKey]) {
            case .success(let value): key = value
            case .failure(let reply): return reply.response(fault: context.responseFault)
            }
            return try await write(request, body: body, key: key, context) { fingerprint in
                try await store.createMessage(
                    ticketId: ticketId, body: body, idempotencyKey: key, token: context.token ?? "",
                    user: context.user ?? .init(id: "usr_api", name: "API user"), fingerprint: fingerprint)
            }
        }
    }

    /// A write's answer: `apply`'s, given the request's fingerprint — or, when the fault middleware injected a `422`,
    /// that refusal, remembered under the request's key as every 422 is (docs/api.md section 5).
    func write(
        _ request: Request, body: Data, key: String?, _ context: DevRequestContext,
        apply: (_ fingerprint: String) async throws -> BackendReply
    ) async throws -> Response {
        let fingerprint = requestFingerprint(method: request.method.rawValue, path: request.uri.path, body: body)
        if context.responseFault == .invalidValue {
            return try await store.refuseInjected(
                idempotencyKey: key, token: context.token ?? "", fingerprint: fingerprint
            ).response()
        }
        return try await apply(fingerprint).response(fault: context.responseFault)
    }

    static func unknownCollection(_ context: DevRequestContext) -> Response {
        BackendReply.error(
            404, "not_found",
            "unknown collection; known: \(SyncCollection.allCases.map(\.name).joined(separator: ", "))"
        ).response(fault: context.responseFault)
    }

    static func unknownRoute(_ context: DevRequestContext) -> Response {
        BackendReply.error(404, "not_found", "no such endpoint; see docs/api.md").response(fault: context.responseFault)
    }

    static func body(of request: Request, _ context: DevRequestContext) async throws -> Data {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return Data(buffer.readableBytesView)
    }

    /// `If-Match: "7"`, `7` or `W/"7"` → 7; absent → nil; anything else is a 400.
    static func parseIfMatch(_ header: String?) -> Result<Int?, ReplyError> {
        guard var text = header?.trimmingCharacters(in: .whitespaces) else { return .success(nil) }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        guard let version = Int(text), version >= 0 else {
            return .failure(
                ReplyError(
                    .error(
                        400, "invalid_request", "If-Match must be a record version such as \"7\"",
                        field: "If-Match")))
        }
        return .success(version)
    }

    /// 1–255 printable ASCII characters.
    static func parseIdempotencyKey(_ header: String?) -> Result<String?, ReplyError> {
        guard let key = header else { return .success(nil) }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return .failure(
                ReplyError(
                    .error(
                        400, "invalid_request",
                        "Idempotency-Key must be 1 to 255 printable ASCII characters", field: "Idempotency-Key")))
        }
        return .success(key)
    }
}

/// A reply carried as an error, so that header parsing can return either a value or the response to send.
struct ReplyError: Error {
    var reply: BackendReply
    init(_ reply: BackendReply) { self.reply = reply }
    func response(fault: FaultKind?) -> Response { reply.response(fault: fault) }
}
