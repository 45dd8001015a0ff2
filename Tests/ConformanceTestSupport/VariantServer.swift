internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import Logging
internal import NIOCore
internal import RepairSyncModels
internal import RepairSyncProtocol
internal import ServiceLifecycle
internal import Synchronization

/// A Repair Minder API server that shares no code with repair-api-dev and differs from it only in ways docs/api.md
/// allows (see `VariantShop`): what a backend team might write. Runs on a free loopback port for the duration of
/// `body`.
///
/// ```swift
/// try await VariantServer.with { baseURL in … }
/// ```
public enum VariantServer {
    public static let token = "variant-token"

    public static func with<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let shop = Shop()
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: VariantErrors())
        router.add(middleware: VariantAuth())
        register(on: router, shop: shop)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "variant-server")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "variant"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let service = ServiceGroup(configuration: .init(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw VariantServerDidNotStart() }
            do {
                let result = try await body("http://127.0.0.1:\(port)")
                await service.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await service.triggerGracefulShutdown()
                throw error
            }
        }
    }

    private static func register(on router: Router<BasicRequestContext>, shop: Shop) {
        let api = router.group("api/v1")
        api.get("health") { _, _ in
            respond(
                .init(
                    status: 200,
                    body: .object([
                        ("time", .string(VariantShop.rfc3339(.now()))), ("status", .string("ok")),
                        ("build", .string("variant")),
                    ])))
        }
        api.get("dashboard/stats") { request, _ in
            respond(VariantShop.dashboard(period: request.uri.queryParameters.get("period").map { String($0) }))
        }
        api.get(":collection/changes") { request, context in
            guard let collection = collection(context) else { return respond(unknown) }
            let query = request.uri.queryParameters
            return respond(
                shop.state.withLock {
                    $0.changes(
                        collection, cursor: query.get("cursor").map { String($0) },
                        limit: query.get("limit").map { String($0) })
                })
        }
        api.get(":collection/:id") { _, context in
            guard let collection = collection(context) else { return respond(unknown) }
            let id = context.parameters.get("id") ?? ""
            return respond(shop.state.withLock { $0.record(collection, id) })
        }
        api.patch(":collection/:id") { request, context in
            guard let collection = collection(context) else { return respond(unknown) }
            guard collection == .orders || collection == .devices else {
                return respond(VariantShop.error(405, "invalid_request", "\(collection.name) cannot be changed"))
            }
            let body = try await collect(request)
            let id = context.parameters.get("id") ?? ""
            return respond(
                shop.state.withLock {
                    $0.patch(
                        collection, id, body: body, ifMatch: request.headers[.ifMatch],
                        key: request.headers[HTTPField.Name("Idempotency-Key")!], path: request.uri.path)
                })
        }
        api.post(":collection") { request, context in
            guard let collection = collection(context) else { return respond(unknown) }
            let body = try await collect(request)
            return respond(
                shop.state.withLock {
                    $0.create(
                        collection, body: body, key: request.headers[HTTPField.Name("Idempotency-Key")!],
                        path: request.uri.path)
                })
        }
        api.post(":collection/:id/messages") { request, context in
            guard context.parameters.get("collection") == "tickets" else { return respond(unknown) }
            let body = try await collect(request)
            let ticket = context.parameters.get("id") ?? ""
            return respond(
                shop.state.withLock {
                    $0.postMessage(
                        ticket: ticket, body: body, key: request.headers[HTTPField.Name("Idempotency-Key")!],
                        path: request.uri.path)
                })
        }
    }

    private static let unknown = VariantShop.error(404, "not_found", "no such collection")

    private static func collection(_ context: BasicRequestContext) -> SyncCollection? {
        SyncCollection(rawValue: context.parameters.get("collection") ?? "")
    }

    private static func collect(_ request: Request) async throws -> Data {
        var request = request
        return Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
    }

    static func respond(_ reply: VariantShop.Reply) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        for (name, value) in reply.headers { headers[HTTPField.Name(name)!] = value }
        if reply.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"variant\"" }
        return Response(
            status: .init(code: reply.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: reply.body.serialized)))
    }
}

public struct VariantServerDidNotStart: Error {}

/// The shop behind a lock, shared by the handlers.
private final class Shop: Sendable {
    let state = Mutex(VariantShop())
}

/// Every `/api/v1` request but health needs `Authorization: Bearer variant-token`.
private struct VariantAuth: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.hasPrefix("/api/v1/"), request.uri.path != "/api/v1/health" else {
            return try await next(request, context)
        }
        guard request.headers[.authorization] == "Bearer \(VariantServer.token)" else {
            return VariantServer.respond(VariantShop.error(401, "unauthorized", "who are you?"))
        }
        return try await next(request, context)
    }
}

/// Errors of the framework itself (no such route) in the contract's shape.
private struct VariantErrors: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            return VariantServer.respond(
                VariantShop.error(
                    error.status.code, error.status.code == 404 ? "not_found" : "invalid_request",
                    error.body ?? "request refused"))
        }
    }
}
