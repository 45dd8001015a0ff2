import AsyncHTTPClient
import BackendTestSupport
import Foundation
import RepairAPIDev
import RepairSyncEngine
import RepairSyncModels
import RepairSyncReliability
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// HTTPS against a real `repair-api-dev` serving certificates from a CA made for the test: a refused certificate
/// stops the run with the reason in words and nothing sent; a proxy gets the API's name unresolved.
@Suite("TLS and proxies", .timeLimit(.minutes(2)))
struct TLSTests {
    /// A backend serving `issued` (by `ca`), and an engine trusting `trust` (nil: the system's CAs only) through
    /// `proxy`, on a fresh store.
    static func withEngine<T: Sendable>(
        ca: ThrowawayCA, issued: ThrowawayCA.Issued, trust: String?,
        minimumTLSVersion: TransportSettings.MinimumTLSVersion = .tls12,
        serverMaximumVersion: String? = nil, proxy: ProxyServer? = nil, host: String = "127.0.0.1",
        _ body: @Sendable (RunningBackend, SyncEngine, String) async throws -> T
    ) async throws -> T {
        let tls = DevBackend.TLS(
            certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath,
            maximumVersion: serverMaximumVersion)
        return try await RunningBackend.with(seed: SeedOptions(orders: 5), tls: (tls, caFile: ca.certificatePath)) {
            backend in
            let directory = try TemporaryDirectory(prefix: "tls-test")
            let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
            let settings = TransportSettings(caFile: trust, minimumTLSVersion: minimumTLSVersion, proxy: proxy)
            let http = try settings.makeHTTPClient()
            let baseURL = "https://\(host):\(backend.port)"
            let api = APIClient(
                configuration: .init(baseURL: baseURL, token: RunningBackend.token), clock: SystemEngineClock(),
                transport: HTTPTransport(baseURL: baseURL, http: http, settings: settings))
            let engine = try SyncEngine(store: store, api: api, configuration: EngineHarness.configuration())
            do {
                let result = try await body(backend, engine, baseURL)
                try await http.shutdown()
                return result
            } catch {
                try? await http.shutdown()
                throw error
            }
        }
    }

    /// Requests the backend has received, not counting this question itself.
    static func requests(_ backend: RunningBackend) async throws -> Int {
        (try await backend.get("/admin/counters").object()["requests"] as? Int ?? 0)
    }

    @Test("a certificate from an unknown CA stops the run with “unknown CA … set api.ca_file”; the server gets nothing")
    func unknownCA() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"), name: "Shop Proxy CA")
        try await Self.withEngine(ca: ca, issued: try ca.issue(), trust: nil) { backend, engine, _ in
            let before = try await Self.requests(backend)
            let report = await engine.performFullSync()
            let stop = try #require(report.stop)
            #expect(stop.hasPrefix("unknown CA: the certificate for 127.0.0.1 is issued by “Shop Proxy CA”"), "\(stop)")
            #expect(stop.contains("set api.ca_file"), "\(stop)")
            #expect(!report.offline, "a refused certificate is not “offline”")
            #expect(await engine.status.phase == .error(stop), "the status names it")
            // One request since: the counters question itself. Nothing of the run reached the server, over TLS or
            // in plain text.
            #expect(try await Self.requests(backend) == before + 1)
        }
    }

    @Test("a change waiting while the certificate is refused is neither sent nor charged an attempt; trusted, it goes")
    func changeWaitsForTrust() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let issued = try ca.issue()
        let store = directory.path("replica.sqlite")
        // Synced while the CA was trusted; then the trust is gone (say a TLS-inspecting proxy appeared).
        let tls = DevBackend.TLS(certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath)
        try await RunningBackend.with(seed: SeedOptions(orders: 5), tls: (tls, caFile: ca.certificatePath)) { backend in
            func engine(trusting caFile: String?) throws -> (SyncEngine, HTTPClient) {
                let settings = TransportSettings(caFile: caFile)
                let http = try settings.makeHTTPClient()
                let api = APIClient(
                    configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token),
                    clock: SystemEngineClock(),
                    transport: HTTPTransport(baseURL: backend.baseURL, http: http, settings: settings))
                return (
                    try SyncEngine(
                        store: try ReplicaStore.open(at: store), api: api, configuration: EngineHarness.configuration()),
                    http
                )
            }
            let (trusting, trustingHTTP) = try engine(trusting: ca.certificatePath)
            #expect(await trusting.performFullSync().succeeded)
            let (refusing, refusingHTTP) = try engine(trusting: nil)
            try await refusing.update(.orders, id: "ord_2", fields: ["notes": "waits for trust"])
            let report = await refusing.sync([])
            #expect(report.stop?.hasPrefix("unknown CA") == true, "\(report.stop ?? "")")
            let entry = try #require(try refusing.outboxEntries().first)
            #expect(entry.state == .pending)
            #expect(entry.attempts == 0)
            #expect(try await backend.get("/api/v1/orders/ord_2").object()["notes"] as? String != "waits for trust")
            // Trusted again (api.ca_file set, restarted): the change goes, once.
            let (fixed, fixedHTTP) = try engine(trusting: ca.certificatePath)
            #expect(await fixed.sync([]).pushed == 1)
            #expect(try await backend.get("/api/v1/orders/ord_2").object()["notes"] as? String == "waits for trust")
            for http in [trustingHTTP, refusingHTTP, fixedHTTP] { try await http.shutdown() }
        }
    }

    /// The certificate problems a TLS client refuses, each served by a fresh CA: whom the engine trusts, and what
    /// the server presents.
    enum RefusedCertificate: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case unknownCA = "unknown CA"
        case expired = "has expired on"
        case otherHost = "is for api.other.example"

        var testDescription: String { rawValue }

        func issue(_ ca: ThrowawayCA) throws -> ThrowawayCA.Issued {
            switch self {
            case .unknownCA: try ca.issue()
            case .expired: try ca.issue(notBefore: Date() - 40 * 86_400, notAfter: Date() - 2 * 86_400)
            case .otherHost: try ca.issue(hosts: ["api.other.example"])
            }
        }

        func trust(_ ca: ThrowawayCA) -> String? { self == .unknownCA ? nil : ca.certificatePath }
    }

    @Test(
        "a refused certificate never falls back to plain HTTP: a plain-text listener on the API's own host and port hears nothing",
        arguments: RefusedCertificate.allCases)
    func noPlainHTTPFallback(refused: RefusedCertificate) async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let issued = try refused.issue(ca)
        let tls = DevBackend.TLS(certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath)
        try await RunningBackend.with(seed: SeedOptions(orders: 5), tls: (tls, caFile: ca.certificatePath)) { backend in
            // The API's port speaks TLS (forwarded to the backend) and catches plain text: http:// to the same host
            // and port — what a fallback would send — is recorded there.
            let trap = try await PlainHTTPTrap.start(upstreamPort: backend.port)
            let baseURL = "https://127.0.0.1:\(trap.port)"
            let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
            let settings = TransportSettings(caFile: refused.trust(ca))
            let http = try settings.makeHTTPClient()
            let api = APIClient(
                configuration: .init(baseURL: baseURL, token: RunningBackend.token), clock: SystemEngineClock(),
                transport: HTTPTransport(baseURL: baseURL, http: http, settings: settings))
            do {
                let engine = try SyncEngine(store: store, api: api, configuration: EngineHarness.configuration())
                // The test's own admin client can ask the backend for its counters only when the certificate is
                // good apart from its CA (it trusts the CA, and checks dates and names).
                let before = refused == .unknownCA ? try await Self.requests(backend) : nil
                // Twice: a second run (a retry) must not fall back either.
                for _ in 0..<2 {
                    let report = await engine.performFullSync()
                    #expect(report.stop?.contains(refused.rawValue) == true, "\(report.stop ?? "no stop")")
                }
                if let before {
                    #expect(
                        try await Self.requests(backend) == before + 1, "only the counters question reached the server")
                }
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
            #expect(trap.tlsConnections >= 2, "the engine reached the API's port over TLS")
            #expect(trap.plainTextLines.isEmpty, "plain text sent to the API's port: \(trap.plainTextLines)")

            // The control: the trap does catch plain HTTP on that port (the same transport, given an http:// URL).
            let plain = HTTPTransport(baseURL: "http://127.0.0.1:\(trap.port)", http: HTTPClient.shared)
            _ = try? await plain.send(TransportRequest(method: "GET", path: "/api/v1/health"), timeout: .seconds(30))
            #expect(
                trap.plainTextLines.contains { $0.hasPrefix("GET /api/v1/health HTTP/1.1") }, "\(trap.plainTextLines)")
            try await trap.stop()
        }
    }

    @Test("an expired certificate is named with the day it expired")
    func expired() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let expiry = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 3 * 86_400)
        let issued = try ca.issue(notBefore: expiry - 30 * 86_400, notAfter: expiry)
        try await Self.withEngine(ca: ca, issued: issued, trust: ca.certificatePath) { backend, engine, _ in
            let report = await engine.performFullSync()
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            #expect(report.stop == "certificate for 127.0.0.1 has expired on \(formatter.string(from: expiry)) UTC")
        }
    }

    @Test("a certificate for another host is named, with the names it is for")
    func wrongHost() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let issued = try ca.issue(hosts: ["api.other.example"])
        try await Self.withEngine(ca: ca, issued: issued, trust: ca.certificatePath) { _, engine, _ in
            let stop = await engine.performFullSync().stop
            #expect(stop == "certificate for 127.0.0.1 is for api.other.example, not 127.0.0.1: check api.base_url")
        }
    }

    @Test("api.tls_min_version 1.3 refuses a server that offers at most TLS 1.2, and says so; 1.2 accepts it")
    func minimumVersion() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let issued = try ca.issue()
        try await Self.withEngine(
            ca: ca, issued: issued, trust: ca.certificatePath, minimumTLSVersion: .tls13, serverMaximumVersion: "1.2"
        ) { _, engine, _ in
            let stop = await engine.performFullSync().stop ?? ""
            #expect(
                stop.contains("offers no TLS version this workstation accepts (api.tls_min_version is 1.3)"), "\(stop)")
        }
        try await Self.withEngine(ca: ca, issued: issued, trust: ca.certificatePath, serverMaximumVersion: "1.2") {
            _, engine, _ in
            #expect(await engine.performFullSync().succeeded)
        }
    }

    @Test(
        "through a CONNECT proxy: the API's name goes to the proxy unresolved, TLS runs end to end, the sync completes")
    func throughProxy() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        // A name this machine cannot resolve: only the proxy knows it.
        let issued = try ca.issue(hosts: ["api.repair.test"])
        let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"])
        let server = ProxyServer(kind: .http, host: "127.0.0.1", port: proxy.port)
        try await Self.withEngine(
            ca: ca, issued: issued, trust: ca.certificatePath, proxy: server, host: "api.repair.test"
        ) {
            backend, engine, _ in
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(report.pulled["orders"] == 5)
            #expect(!proxy.requestLines.isEmpty)
            #expect(
                proxy.requestLines.allSatisfy { $0 == "CONNECT api.repair.test:\(backend.port) HTTP/1.1" },
                "\(proxy.requestLines)")
        }
        try await proxy.stop()
    }

    @Test("a refused certificate behind a proxy is explained through the same proxy")
    func refusedThroughProxy() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"), name: "Inspecting Proxy CA")
        let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"])
        let server = ProxyServer(kind: .http, host: "127.0.0.1", port: proxy.port)
        try await Self.withEngine(
            ca: ca, issued: try ca.issue(hosts: ["api.repair.test"]), trust: nil, proxy: server, host: "api.repair.test"
        ) { _, engine, _ in
            let stop = await engine.performFullSync().stop ?? ""
            #expect(
                stop.hasPrefix("unknown CA: the certificate for api.repair.test is issued by “Inspecting Proxy CA”"),
                "\(stop)")
        }
        try await proxy.stop()
    }

    @Test(
        "a proxy that wants credentials gets them from the proxy URL; without them, or with wrong ones, the API is unreachable, said why"
    )
    func proxyCredentials() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-ca")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let issued = try ca.issue(hosts: ["api.repair.test"])
        let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"], credentials: "shop:s3cret")
        let withCredentials = try ProxyServer(parsing: "http://shop:s3cret@127.0.0.1:\(proxy.port)")
        #expect(withCredentials.description == "http://shop:<redacted>@127.0.0.1:\(proxy.port)")
        try await Self.withEngine(
            ca: ca, issued: issued, trust: ca.certificatePath, proxy: withCredentials, host: "api.repair.test"
        ) { _, engine, _ in
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
        }
        #expect(proxy.authorizations.contains("Basic " + Data("shop:s3cret".utf8).base64EncodedString()))
        let without = ProxyServer(kind: .http, host: "127.0.0.1", port: proxy.port)
        try await Self.withEngine(
            ca: ca, issued: issued, trust: ca.certificatePath, proxy: without, host: "api.repair.test"
        ) {
            _, engine, _ in
            let report = await engine.performFullSync()
            #expect(report.offline)
            #expect(report.stop?.contains("the proxy asks for credentials (407)") == true, "\(report.stop ?? "")")
        }
        // Credentials the proxy refuses are not "missing": the message says to correct them.
        let wrong = try ProxyServer(parsing: "http://shop:wr0ng@127.0.0.1:\(proxy.port)")
        try await Self.withEngine(
            ca: ca, issued: issued, trust: ca.certificatePath, proxy: wrong, host: "api.repair.test"
        ) {
            _, engine, _ in
            let report = await engine.performFullSync()
            #expect(report.offline)
            let stop = report.stop ?? ""
            #expect(stop.contains("the proxy refused the user name and password of its URL (407)"), "\(stop)")
            #expect(!stop.contains("wr0ng"), "\(stop)")
        }
        try await proxy.stop()
    }
}
