internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import Logging

/// One log line per request: method, path, status, duration.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let counters: DevCounters
    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        counters.update { $0.requests += 1 }
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: response.status.code, since: start)
            return response
        } catch let error as any HTTPResponseError {
            log(request, status: error.status.code, since: start)
            throw error
        } catch {
            log(request, status: 500, since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.info("\(request.method) \(request.uri.path) \(status) \(String(format: "%.1f", ms))ms")
    }
}

/// Bearer-token authentication for `/api/v1` (except health).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let users: [String: BackendStore.User]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/api/v1/"), path != "/api/v1/health" else { return try await next(request, context) }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let user = users[String(header.dropFirst("Bearer ".count))]
        else {
            return BackendReply.error(401, "unauthorized", "a valid bearer token is required").response()
        }
        var context = context
        context.token = String(header.dropFirst("Bearer ".count))
        context.user = user
        return try await next(request, context)
    }
}

/// Injects the configured faults into `/api/v1` requests, and counts requests that ignored a `Retry-After`.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let injector: FaultInjector
    let counters: DevCounters

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/api/v1/") else { return try await next(request, context) }
        if let token = context.token, injector.isEarly(token: token) {
            counters.update { $0.retryAfterViolations += 1 }
        }
        guard
            let kind = injector.draw(
                method: request.method.rawValue, path: path, isHealth: path == "/api/v1/health")
        else { return try await next(request, context) }
        counters.update { $0.faultsInjected[kind.rawValue, default: 0] += 1 }
        switch kind {
        case .internalError:
            return BackendReply.error(500, "internal", "injected fault: internal error").response()
        case .unavailable:
            return BackendReply.error(503, "unavailable", "injected fault: service unavailable").response()
        case .unauthorized:
            return BackendReply.error(401, "unauthorized", "injected fault: token rejected").response()
        case .rateLimited:
            let seconds = injector.retryAfterSeconds
            if let token = context.token { injector.rateLimited(token: token, seconds: seconds) }
            return retryAfter(BackendReply.error(429, "rate_limited", "too many requests; retry after \(seconds) s"))
        case .unavailableRetryAfter:
            let seconds = injector.retryAfterSeconds
            if let token = context.token { injector.rateLimited(token: token, seconds: seconds) }
            return retryAfter(BackendReply.error(503, "unavailable", "down for maintenance; retry after \(seconds) s"))
        case .html401, .html403, .html404:
            let status = kind == .html401 ? 401 : kind == .html403 ? 403 : 404
            return Response(
                status: .init(code: status), headers: [.contentType: "text/html; charset=utf-8"],
                body: ResponseBody(
                    byteBuffer: ByteBuffer(
                        string:
                            "<html><head><title>\(status)</title></head><body><h1>Proxy error \(status)</h1></body></html>"
                    )))
        case .invalidValue where request.method == .patch || request.method == .post:
            // A write: refused by the route, which remembers the refusal under the request's key (section 5).
            var context = context
            context.responseFault = kind
            return try await next(request, context)
        case .invalidValue:
            return BackendReply.error(422, "invalid_value", "injected fault: value refused", field: "notes").response()
        case .stuckFeed, .emptyFeed, .rotatingFeed, .stalePage, .malformedRecord, .versionMismatch, .cachedAnswer:
            var context = context
            context.responseFault = kind
            return try await next(request, context)
        case .slow:
            try await Task.sleep(for: injector.slowDuration)
            return try await next(request, context)
        case .cut, .truncated, .gzipBomb, .corruptGzip:
            var context = context
            context.responseFault = kind
            return try await next(request, context)
        }
    }
}

extension FaultMiddleware {
    /// The reply with its `Retry-After`: seconds, or an HTTP date on the server's clock when the plan asks for one.
    private func retryAfter(_ reply: BackendReply) -> Response {
        var reply = reply
        let seconds = injector.retryAfterSeconds
        if injector.retryAfterAsDate {
            var response = reply.response()
            response.headers[.retryAfter] = ServerClock.httpDate(
                injector.serverNow.addingTimeInterval(Double(seconds)))
            return response
        }
        reply.retryAfter = seconds
        return reply.response()
    }
}

/// The admin surface exists only when enabled, and only for loopback peers.
struct AdminGateMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let enabled: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.hasPrefix("/admin") else { return try await next(request, context) }
        guard enabled else {
            return BackendReply.error(404, "not_found", "the admin surface is off (--admin)").response()
        }
        guard context.isLoopbackPeer else {
            return BackendReply.error(403, "forbidden", "the admin surface answers loopback peers only").response()
        }
        return try await next(request, context)
    }
}

/// Errors the framework raises itself (no route, method not allowed, body too large) get the contract's JSON
/// error shape too, so that a client never has to parse an empty or plain-text error body.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let code: String =
                switch error.status.code {
                case 404: "not_found"
                case 405: "method_not_allowed"
                case 413: "payload_too_large"
                case 400..<500: "invalid_request"
                default: "internal"
                }
            return BackendReply.error(
                error.status.code, code, error.body ?? error.status.reasonPhrase
            ).response()
        }
    }
}
