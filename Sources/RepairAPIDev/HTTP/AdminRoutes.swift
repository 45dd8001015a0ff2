internal import Foundation
internal import Hummingbird
internal import NIOCore
internal import RepairSyncModels

/// The admin surface for tests and the soak: edit and delete as another user would, read counters, expire
/// cursors, inject faults. Reachable only with `--admin`, from loopback (see AdminGateMiddleware).
struct AdminRoutes {
    let store: BackendStore
    let injector: FaultInjector

    struct CountersBody: Encodable {
        var records: [String: Int]
        var tombstones: [String: Int]
        var messagesCreated: Int
        var messageReplays: Int
        var patchesApplied: Int
        var recordsCreated: [String: Int]
        var createReplays: Int
        var idempotentReplays: Int
        var versionConflicts: Int
        var requests: Int
        var faultsInjected: [String: Int]
        var retryAfterViolations: Int
        var maxSeq: Int64
        var pagesServed: [String: Int]
        var pagesRepeated: [String: Int]
        var responseBodyBytes: Int
        var responseBodyBytesUnencoded: Int
        var compressedResponses: Int

        enum CodingKeys: String, CodingKey {
            case records, tombstones, requests
            case messagesCreated = "messages_created"
            case messageReplays = "message_replays"
            case patchesApplied = "patches_applied"
            case recordsCreated = "records_created"
            case createReplays = "create_replays"
            case idempotentReplays = "idempotent_replays"
            case versionConflicts = "version_conflicts"
            case faultsInjected = "faults_injected"
            case retryAfterViolations = "retry_after_violations"
            case maxSeq = "max_seq"
            case pagesServed = "pages_served"
            case pagesRepeated = "pages_repeated"
            case responseBodyBytes = "response_body_bytes"
            case responseBodyBytesUnencoded = "response_body_bytes_unencoded"
            case compressedResponses = "compressed_responses"
        }
    }

    /// `GET /admin/writes`: the write log, oldest first.
    struct WritesBody: Encodable {
        var writes: [WriteLog.Entry]
        var dropped: Int
    }

    func register(on router: Router<DevRequestContext>) {
        let admin = router.group("admin")
        admin.get("counters") { _, _ in
            let counts = try await store.counts()
            let values = store.counters.snapshot
            let body = CountersBody(
                records: Dictionary(uniqueKeysWithValues: counts.records.map { ($0.key.name, $0.value) }),
                tombstones: Dictionary(uniqueKeysWithValues: counts.tombstones.map { ($0.key.name, $0.value) }),
                messagesCreated: values.messagesCreated, messageReplays: values.messageReplays,
                patchesApplied: values.patchesApplied, recordsCreated: values.recordsCreated,
                createReplays: values.createReplays, idempotentReplays: values.idempotentReplays,
                versionConflicts: values.versionConflicts, requests: values.requests,
                faultsInjected: values.faultsInjected, retryAfterViolations: values.retryAfterViolations,
                maxSeq: counts.maxSequence, pagesServed: values.pagesServed, pagesRepeated: values.pagesRepeated,
                responseBodyBytes: values.responseBodyBytes,
                responseBodyBytesUnencoded: values.responseBodyBytesUnencoded,
                compressedResponses: values.compressedResponses)
            return try BackendReply.json(200, body).response()
        }
        admin.get("writes") { request, _ in
            let path = request.uri.queryParameters.get("path").map { String($0) }
            let (entries, dropped) = store.counters.writes.entries(path: path)
            return try BackendReply.json(200, WritesBody(writes: entries, dropped: dropped)).response()
        }
        admin.patch("records/:collection/:id") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return APIRoutes.unknownCollection(context)
            }
            let body = try await APIRoutes.body(of: request, context)
            return try await store.adminEdit(collection, id: context.parameters.get("id") ?? "", body: body).response()
        }
        admin.put("records/:collection/:id") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return APIRoutes.unknownCollection(context)
            }
            let body = try await APIRoutes.body(of: request, context)
            let inFeed = request.uri.queryParameters.get("in_feed") != "false"
            return try await store.adminRestore(
                collection, id: context.parameters.get("id") ?? "", body: body, inFeed: inFeed
            ).response()
        }
        admin.post("records/:collection") { request, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return APIRoutes.unknownCollection(context)
            }
            let body = try await APIRoutes.body(of: request, context)
            return try await store.adminCreate(collection, body: body).response()
        }
        admin.delete("records/:collection/:id") { _, context in
            guard let collection = SyncCollection(rawValue: context.parameters.get("collection") ?? "") else {
                return APIRoutes.unknownCollection(context)
            }
            return try await store.adminDelete(collection, id: context.parameters.get("id") ?? "").response()
        }
        admin.post("cursors/expire") { _, _ in
            try await store.expireCursors()
            return try BackendReply.json(200, ["expired": true]).response()
        }
        admin.put("faults") { request, context in
            let body = try await APIRoutes.body(of: request, context)
            do {
                try injector.configure(try JSONDecoder().decode(FaultInjector.Plan.self, from: body))
            } catch let error as FaultPlanError {
                return BackendReply.error(422, "invalid_value", error.message).response()
            } catch {
                return BackendReply.error(400, "invalid_request", "not a fault plan: \(error)").response()
            }
            return try BackendReply.json(200, ["faults": "on"]).response()
        }
        admin.delete("faults") { _, _ in
            try injector.configure(nil)
            return try BackendReply.json(200, ["faults": "off"]).response()
        }
        admin.post("faults/next") { request, context in
            let body = try await APIRoutes.body(of: request, context)
            guard let oneShot = try? JSONDecoder().decode(FaultInjector.OneShot.self, from: body) else {
                return BackendReply.error(
                    400, "invalid_request",
                    "expected {\"kind\": one of \(FaultKind.allCases.map(\.rawValue)), \"method\"?, \"path_prefix\"?, \"count\"?}"
                ).response()
            }
            injector.queue(oneShot)
            return try BackendReply.json(200, ["queued": oneShot.count ?? 1]).response()
        }
    }
}
