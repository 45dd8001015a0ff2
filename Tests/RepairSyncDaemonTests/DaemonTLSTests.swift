import BackendTestSupport
import Foundation
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon over HTTPS against `repair-api-dev --tls-cert`: through a proxy from the environment, and with a
/// certificate it must refuse — named in the status, the journal and doctor, never retried in silence.
@Suite("Daemon over HTTPS", .serialized, .timeLimit(.minutes(3)))
struct DaemonTLSTests {
    /// A `repair-api-dev` process serving `issued` over HTTPS.
    static func server(_ data: TemporaryDirectory, _ issued: ThrowawayCA.Issued) async throws -> ServerProcess {
        try await ServerProcess(
            arguments: ConnectivityTests.seedArguments(data.path("api.sqlite")) + [
                "--port", "0", "--tls-cert", issued.certificatePath, "--tls-key", issued.keyPath,
            ])
    }

    /// The log's lines about a refused handshake (`HTTPTransport`'s “TLS to the API failed”).
    static func tlsFailureLines(_ h: DaemonHarness) -> [Substring] {
        h.log().split(separator: "\n").filter { $0.contains("TLS to the API failed") }
    }

    /// A daemon against a `repair-api-dev` presenting a certificate of `ca` it refuses (`issue`), after a `sync` it
    /// waited for: `body` gets the harness, the run's report and its stop reason. With `trusting`, `api.ca_file` names
    /// the CA and the retry backoff is long — with the default 1 s base the retry is due 2.5–5 s after the failed run,
    /// and on a loaded machine it could be under way when `status` is read ("syncing", no next run planned).
    static func withRefusedCertificate(
        ca: (TemporaryDirectory) throws -> ThrowawayCA, trusting: Bool = true,
        issue: (ThrowawayCA) throws -> ThrowawayCA.Issued,
        _ body: (_ h: DaemonHarness, _ report: JSONValue, _ stop: String) async throws -> Void
    ) async throws {
        let data = try TemporaryDirectory(prefix: "tls-daemon")
        let ca = try ca(data)
        let server = try await Self.server(data, try issue(ca))
        let h = try DaemonHarness(baseURL: server.baseURL)
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        if trusting { try h.writeConfig("retry:\n  base: 10m\n  cap: 20m", api: ["ca_file: \(ca.certificatePath)"]) }
        try await h.start()
        let report = try await h.call("sync", .object(["wait": .bool(true)]))
        let stop = try #require(report["stop"]?.stringValue, "\(report)")
        try await body(h, report, stop)
        await server.stop()
    }

    @Test("api.ca_file trusts a private CA; https_proxy from the environment tunnels to a name only the proxy resolves")
    func throughEnvironmentProxy() async throws {
        let data = try TemporaryDirectory(prefix: "tls-daemon")
        let ca = try ThrowawayCA(directory: data.path("ca"))
        let server = try await Self.server(data, try ca.issue(hosts: ["api.repair.test"]))
        #expect(server.baseURL.hasPrefix("https://"))
        let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"])
        let h = try DaemonHarness(baseURL: "https://api.repair.test:\(server.port)")
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        try h.writeConfig(api: ["ca_file: \(ca.certificatePath)"])
        h.environment = ["https_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "localhost,127.0.0.1"]
        try await h.start()
        let report = try await h.call("sync", .object(["wait": .bool(true)]))
        #expect(report["stop"] == nil || report["stop"] == .null, "\(report)")
        let status = try await h.call("status")
        guard case .array(let collections)? = status["collections"] else {
            Issue.record("no collections: \(status)")
            return
        }
        let orders = collections.first { $0["collection"] == .string("orders") }
        #expect(orders?["records"]?.intValue == 20, "\(status)")
        #expect(!proxy.requestLines.isEmpty)
        #expect(
            proxy.requestLines.allSatisfy { $0 == "CONNECT api.repair.test:\(server.port) HTTP/1.1" },
            "\(proxy.requestLines)")
        #expect(h.log().contains("https_proxy"), "the start-up line says which proxy, and from where")

        // doctor (asked of the daemon, which has the proxy) reads the certificate through the proxy too.
        let doctor = try await DaemonEndToEndTests.doctor(h)
        let certificate = try #require(doctor.checks["certificate"])
        #expect(certificate.level == "ok", "\(certificate)")
        #expect(certificate.detail.contains("certificate for api.repair.test issued by “\(ca.name)”, valid until"))
        #expect(certificate.detail.contains("through the proxy http://127.0.0.1:\(proxy.port)"))
        try await proxy.stop()
        await server.stop()
    }

    @Test(
        "an expired certificate: the status and the run name it, the log says it at error level, doctor fails it with the fix; the schedule backs off"
    )
    func expiredCertificate() async throws {
        try await Self.withRefusedCertificate(
            ca: { try ThrowawayCA(directory: $0.path("ca")) },
            issue: { try $0.issue(notBefore: Date() - 40 * 86_400, notAfter: Date() - 2 * 86_400) }
        ) { h, report, stop in
            #expect(stop.hasPrefix("certificate for 127.0.0.1 has expired on "), "\(stop)")
            #expect(report["offline"] == .bool(false))

            let status = try await h.call("status")
            #expect(status["state"] == .string("error"))
            #expect(status["message"]?.stringValue == stop)
            #expect(status["online"] == .bool(true), "a refused certificate is not “offline”")
            #expect(status["nextRun"]?["reason"]?.stringValue == "retry", "backed off, not a tight loop: \(status)")
            let logged = Self.tlsFailureLines(h)
            #expect(!logged.isEmpty, "\(h.log().suffix(2000))")
            #expect(logged.allSatisfy { $0.contains("error") && $0.contains("has expired on") })

            let doctor = try await DaemonEndToEndTests.doctor(h)
            #expect(doctor.status == 1)
            #expect(doctor.checks["api"]?.level == "fail")
            let certificate = try #require(doctor.checks["certificate"])
            #expect(certificate.level == "fail")
            #expect(certificate.detail == stop)
            let text = try await h.repairctl(["doctor"])
            #expect(text.stdout.contains("renewed"), "the fix is printed: \(text.stdout)")
        }
    }

    @Test("a certificate from a CA this machine does not know: “unknown CA … set api.ca_file” in the status and doctor")
    func unknownCA() async throws {
        try await Self.withRefusedCertificate(
            ca: { try ThrowawayCA(directory: $0.path("ca"), name: "Shop Firewall CA") }, trusting: false,
            issue: { try $0.issue() }
        ) { h, _, stop in
            #expect(
                stop.hasPrefix("unknown CA: the certificate for 127.0.0.1 is issued by “Shop Firewall CA”"), "\(stop)")
            #expect(stop.contains("set api.ca_file"))
            #expect(try await h.call("status")["message"]?.stringValue == stop)
            let logged = Self.tlsFailureLines(h)
            #expect(!logged.isEmpty, "\(h.log().suffix(2000))")
            #expect(logged.allSatisfy { $0.contains(" error ") && $0.contains(stop) }, "\(logged)")
            let text = try await h.repairctl(["doctor"])
            #expect(text.stdout.contains("unknown CA"), "\(text.stdout)")
            #expect(text.stdout.contains("set api.ca_file to it"), "\(text.stdout)")
            // repairsyncd doctor, without asking the daemon, builds its client from the same settings and says the same.
            let offline = try await DaemonEndToEndTests.doctor(h, offline: true)
            #expect(offline.checks["certificate"]?.level == "fail", "\(offline.checks)")
            #expect(offline.checks["certificate"]?.detail.hasPrefix("unknown CA") == true, "\(offline.checks)")
            #expect(offline.checks["api"]?.detail.contains("TLS handshake failed") == true, "\(offline.checks)")
        }
    }

    @Test(
        "a certificate for another host: the status and the run name it, the log says it at error level, doctor fails it with the fix"
    )
    func wrongHost() async throws {
        try await Self.withRefusedCertificate(
            ca: { try ThrowawayCA(directory: $0.path("ca")) }, issue: { try $0.issue(hosts: ["api.other.example"]) }
        ) { h, report, stop in
            #expect(
                stop == "certificate for 127.0.0.1 is for api.other.example, not 127.0.0.1: check api.base_url",
                "\(stop)")
            #expect(report["offline"] == .bool(false))

            let status = try await h.call("status")
            #expect(status["state"] == .string("error"))
            #expect(status["message"]?.stringValue == stop)
            #expect(status["nextRun"]?["reason"]?.stringValue == "retry", "backed off, not a tight loop: \(status)")
            let logged = Self.tlsFailureLines(h)
            #expect(!logged.isEmpty, "\(h.log().suffix(2000))")
            #expect(logged.allSatisfy { $0.contains(" error ") && $0.contains(stop) }, "\(logged)")

            let doctor = try await DaemonEndToEndTests.doctor(h)
            #expect(doctor.status == 1)
            let certificate = try #require(doctor.checks["certificate"])
            #expect(certificate.level == "fail")
            #expect(certificate.detail == stop)
            #expect(certificate.fix == "api.base_url must name a host the certificate is for", "\(certificate)")
            let text = try await h.repairctl(["doctor"])
            #expect(
                text.stdout.contains("api.base_url must name a host the certificate is for"),
                "the fix is printed: \(text.stdout)")
        }
    }

    @Test(
        "api.proxy in the configuration file: CONNECT carries the unresolved name, its credentials go to the proxy and nowhere else, it wins over https_proxy"
    )
    func throughConfiguredProxy() async throws {
        let data = try TemporaryDirectory(prefix: "tls-daemon")
        let ca = try ThrowawayCA(directory: data.path("ca"))
        let server = try await Self.server(data, try ca.issue(hosts: ["api.repair.test"]))
        // api.repair.test resolves only through the proxy; the proxy wants credentials.
        let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"], credentials: "shop:s3cret")
        // The environment names another proxy, which api.proxy overrides: it must hear nothing.
        let environmentProxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"])
        let h = try DaemonHarness(baseURL: "https://api.repair.test:\(server.port)")
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        try h.writeConfig(api: ["ca_file: \(ca.certificatePath)", "proxy: http://shop:s3cret@127.0.0.1:\(proxy.port)"])
        h.environment = ["https_proxy": "http://127.0.0.1:\(environmentProxy.port)"]
        try await h.start()
        let report = try await h.call("sync", .object(["wait": .bool(true)]))
        #expect(report["stop"] == nil || report["stop"] == .null, "\(report)")
        let status = try await h.call("status")
        guard case .array(let collections)? = status["collections"] else {
            Issue.record("no collections: \(status)")
            return
        }
        #expect(collections.first { $0["collection"] == .string("orders") }?["records"]?.intValue == 20, "\(status)")

        #expect(!proxy.requestLines.isEmpty)
        #expect(
            proxy.requestLines.allSatisfy { $0 == "CONNECT api.repair.test:\(server.port) HTTP/1.1" },
            "\(proxy.requestLines)")
        #expect(proxy.tunnels > 0)
        #expect(proxy.authorizations.contains("Basic " + Data("shop:s3cret".utf8).base64EncodedString()))
        #expect(
            environmentProxy.requestLines.isEmpty, "api.proxy wins over https_proxy: \(environmentProxy.requestLines)")
        let log = h.log()
        #expect(log.contains("http://shop:<redacted>@127.0.0.1:\(proxy.port) (from api.proxy)"), "\(log.prefix(2000))")
        #expect(!log.contains("s3cret"), "the proxy's password is never logged")

        let doctor = try await DaemonEndToEndTests.doctor(h)
        let certificate = try #require(doctor.checks["certificate"])
        #expect(certificate.level == "ok", "\(certificate)")
        #expect(
            certificate.detail.contains("through the proxy http://shop:<redacted>@127.0.0.1:\(proxy.port)"),
            "\(certificate)")
        let text = try await h.repairctl(["doctor"])
        #expect(!text.stdout.contains("s3cret") && !text.stderr.contains("s3cret"), "doctor never prints the password")

        // A wrong password: the API does not answer, and the reason and the fix name the proxy's credentials, not
        // the network (a 407 said to set credentials that were set).
        try h.writeConfig(api: ["ca_file: \(ca.certificatePath)", "proxy: http://shop:wr0ng@127.0.0.1:\(proxy.port)"])
        let refused = try await DaemonEndToEndTests.doctor(h, offline: true)
        let api = try #require(refused.checks["api"])
        #expect(api.level == "fail", "\(api)")
        #expect(api.detail.contains("the proxy refused the user name and password of its URL (407)"), "\(api)")
        #expect(
            api.fix.contains("the proxy http://shop:<redacted>@127.0.0.1:\(proxy.port) (from api.proxy)"), "\(api)")
        #expect(!api.detail.contains("wr0ng") && !api.fix.contains("wr0ng"), "\(api)")
        try await proxy.stop()
        try await environmentProxy.stop()
        await server.stop()
    }
}
