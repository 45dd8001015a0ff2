public import AsyncHTTPClient
public import Foundation
internal import NIOCore
public import NIOHTTP1
public import RepairAPIDev
internal import RepairSyncEngine
internal import RepairSyncReliability

/// A `repair-api-dev` server running in this process on a free loopback port, for the duration of `body`.
///
/// ```swift
/// try await RunningBackend.with(seed: SeedOptions(orders: 50)) { backend in
///     let page = try await backend.get("/api/v1/orders/changes")
/// }
/// ```
public struct RunningBackend: Sendable {
    public static let token = "test-token"
    public static let otherToken = "other-token"

    /// How the backend is served: plain HTTP, or HTTPS with a certificate from a throwaway CA made for the run.
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https
    }

    public let port: Int
    public let backend: DevBackend
    /// With HTTPS: the throwaway CA's certificate (a client's `api.ca_file`).
    public let caFile: String?
    /// A client that trusts `caFile` (the shared one for plain HTTP).
    public let client: HTTPClient
    public var scheme: Scheme { caFile == nil ? .http : .https }
    public var baseURL: String { "\(scheme.rawValue)://127.0.0.1:\(port)" }

    /// Starts a backend (admin surface on) over `scheme`, runs `body` against it, then stops the server. With HTTPS
    /// a CA is made for the run and issues the server a certificate for 127.0.0.1, ::1 and localhost (`tls` gives
    /// another certificate instead; `caFile` then names the CA to trust).
    public static func with<T: Sendable>(
        seed: SeedOptions? = nil, admin: Bool = true, scheme: Scheme = .http,
        tls: (DevBackend.TLS, caFile: String)? = nil,
        compression: Bool = true, _ body: @Sendable (RunningBackend) async throws -> T
    ) async throws -> T {
        var serverTLS = tls?.0
        var caFile = tls?.caFile
        var certificates: String?
        if scheme == .https, tls == nil {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "backend-tls-\(UUID().uuidString)"
            ).path
            let ca = try ThrowawayCA(directory: directory)
            let issued = try ca.issue()
            serverTLS = DevBackend.TLS(certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath)
            caFile = ca.certificatePath
            certificates = directory
        }
        defer { if let certificates { try? FileManager.default.removeItem(atPath: certificates) } }
        let client = caFile == nil ? HTTPClient.shared : try TransportSettings(caFile: caFile).makeHTTPClient()
        do {
            let result = try await run(
                seed: seed, admin: admin, tls: serverTLS, caFile: caFile, client: client, compression: compression, body
            )
            if caFile != nil { try? await client.shutdown() }
            return result
        } catch {
            if caFile != nil { try? await client.shutdown() }
            throw error
        }
    }

    private static func run<T: Sendable>(
        seed: SeedOptions?, admin: Bool, tls: DevBackend.TLS?, caFile: String?, client: HTTPClient, compression: Bool,
        _ body: @Sendable (RunningBackend) async throws -> T
    ) async throws -> T {
        let backend = try DevBackend(
            options: .init(
                tokens: [token: "Test Technician", otherToken: "Other Technician"], admin: admin, tls: tls,
                compression: compression))
        if let seed { try backend.seed(seed) }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await backend.run { port in portContinuation.yield(port) }
                portContinuation.finish()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw BackendDidNotStart() }
            do {
                let result = try await body(
                    RunningBackend(port: port, backend: backend, caFile: caFile, client: client))
                await backend.shutdown()
                while (try await group.next()) != nil {}
                return result
            } catch {
                await backend.shutdown()
                throw error
            }
        }
    }

    /// Sends one request with the test token (unless `token` says otherwise) and collects the whole response.
    public func send(
        _ method: HTTPMethod, _ path: String, json: String? = nil, token: String? = RunningBackend.token,
        headers: [(String, String)] = []
    ) async throws -> APIResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return APIResponse(
            status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    public func get(_ path: String, token: String? = RunningBackend.token) async throws -> APIResponse {
        try await send(.GET, path, token: token)
    }
}

public struct BackendDidNotStart: Error {}

/// A collected HTTP response.
public struct APIResponse: Sendable {
    public let status: Int
    public let headers: HTTPHeaders
    public let body: Data

    public init(status: Int, headers: HTTPHeaders, body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (a test failure when it is not one).
    public func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw NotAJSONObject(text: text)
        }
        return object
    }

    /// `error.code` and `error.field` of an error body.
    public func errorCode() throws -> String? { (try object()["error"] as? [String: Any])?["code"] as? String }
    public func errorField() throws -> String? { (try object()["error"] as? [String: Any])?["field"] as? String }
}

public struct NotAJSONObject: Error, CustomStringConvertible {
    public let text: String
    public var description: String { "not a JSON object: \(text.prefix(300))" }
}

/// A server started elsewhere (e.g. the built executable), addressed by port.
public struct RunningAddress: Sendable {
    public let port: Int

    public init(port: Int) { self.port = port }

    public func get(_ path: String, token: String?) async throws -> APIResponse {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return APIResponse(
            status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }
}
