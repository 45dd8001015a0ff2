import Foundation
import RepairSyncEngine
import Testing

/// Proxy URLs and the proxy environment, read the way curl reads them.
@Suite("Proxy settings")
struct ProxyServerTests {
    @Test("proxy URLs: http with and without credentials, socks5, a bare host:port; the password never printed")
    func parsing() throws {
        let plain = try ProxyServer(parsing: "http://proxy.shop.lan:3128")
        #expect(plain == ProxyServer(kind: .http, host: "proxy.shop.lan", port: 3128))
        let withCredentials = try ProxyServer(parsing: "http://shop%40front:p%3Ass@10.0.0.1:8080")
        #expect(withCredentials.username == "shop@front")
        #expect(withCredentials.password == "p:ss")
        #expect(withCredentials.description == "http://shop@front:<redacted>@10.0.0.1:8080")
        #expect(try ProxyServer(parsing: "proxy.shop.lan:3128") == plain)
        #expect(try ProxyServer(parsing: "http://proxy.shop.lan").port == 80)
        #expect(
            try ProxyServer(parsing: "socks5h://127.0.0.1") == ProxyServer(kind: .socks5, host: "127.0.0.1", port: 1080)
        )
        #expect(try ProxyServer(parsing: "http://[::1]:3128").description == "http://[::1]:3128")
    }

    @Test(
        "proxies that cannot be used are refused with the reason",
        arguments: [
            ("https://proxy:3128", "not supported"), ("ftp://proxy:21", "ftp is not supported"),
            ("http://", "expected a proxy URL"),
            ("socks5://user:pw@proxy:1080", "SOCKS proxies with a user name"), ("http://proxy:3128/path", "no path"),
        ])
    func refused(text: String, reason: String) {
        #expect {
            try ProxyServer(parsing: text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test(
        "the environment: https_proxy for https, http_proxy (never HTTP_PROXY) for http, all_proxy last; no_proxy wins; loopback never"
    )
    func environment() throws {
        let https = URL(string: "https://api.repair.example")!
        let http = URL(string: "http://api.repair.example:8080")!
        #expect(
            try ProxyServer.fromEnvironment(["https_proxy": "http://p:3128"], for: https)?.variable == "https_proxy")
        #expect(try ProxyServer.fromEnvironment(["HTTPS_PROXY": "http://p:3128"], for: https)?.proxy.host == "p")
        #expect(try ProxyServer.fromEnvironment(["http_proxy": "http://p:3128"], for: https) == nil)
        #expect(try ProxyServer.fromEnvironment(["HTTP_PROXY": "http://p:3128"], for: http) == nil)
        #expect(try ProxyServer.fromEnvironment(["http_proxy": "http://p:3128"], for: http)?.variable == "http_proxy")
        #expect(try ProxyServer.fromEnvironment(["all_proxy": "socks5://s"], for: https)?.proxy.kind == .socks5)
        #expect(
            try ProxyServer.fromEnvironment(["https_proxy": "http://p:3128", "no_proxy": ".example"], for: https) == nil
        )
        #expect(try ProxyServer.fromEnvironment(["https_proxy": "http://p:3128", "NO_PROXY": "*"], for: https) == nil)
        for loopback in ["http://127.0.0.1:8080", "https://localhost:8443", "https://[::1]:8443"] {
            let url = URL(string: loopback)!
            #expect(
                try ProxyServer.fromEnvironment(
                    ["https_proxy": "http://p:3128", "http_proxy": "http://p:3128"], for: url) == nil,
                "\(loopback) is never proxied")
        }
        #expect(throws: TransportSettingsError.self) {
            try ProxyServer.fromEnvironment(["https_proxy": "https://p:3128"], for: https)
        }
    }

    @Test(
        "no_proxy: names cover their subdomains, IPs and host:port match exactly, CIDR blocks, and *",
        arguments: [
            ("repair.example", "api.repair.example", 443, true), (".repair.example", "repair.example", 443, true),
            ("repair.example", "notrepair.example", 443, false),
            ("api.repair.example:8443", "api.repair.example", 443, false),
            ("api.repair.example:443", "api.repair.example", 443, true), ("10.0.0.0/8", "10.1.2.3", 443, true),
            ("10.0.0.0/8", "11.1.2.3", 443, false), ("127.0.0.1", "127.0.0.1", 80, true),
            ("localhost, 127.0.0.1", "::1", 80, false),
            ("::1", "[::1]", 80, true), ("*", "anything", 1, true), ("", "api.repair.example", 443, false),
        ])
    func noProxy(entries: String, host: String, port: Int, bypass: Bool) {
        #expect(ProxyServer.bypasses(entries, host: host, port: port) == bypass)
    }
}
