import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIConformance
import RepairAPIDev
import RepairSyncProcesses
import RepairSyncTestSupport
import Testing

/// The built `repair-api-conformance` as a backend team's CI runs it.
@Suite("repair-api-conformance executable")
struct ExecutableTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("repair-api-conformance")
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        func json() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any], "\(stdout)")
        }
    }

    /// Runs the binary to its end without blocking a thread of the test's pool (standard error goes to a file).
    static func run(_ arguments: [String]) async throws -> Run {
        let path = executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-conformance first: \(path)")
        let directory = try TemporaryDirectory(prefix: "conformance-cli")
        let err = directory.path("stderr")
        let (status, stdout) = try await ChildProcess.run([path] + arguments, logPath: err)
        return Run(status: status, stdout: stdout, stderr: try String(contentsOfFile: err, encoding: .utf8))
    }

    static func tokenFile(_ directory: TemporaryDirectory, _ token: String = RunningBackend.token) throws -> String {
        let path = directory.path("token")
        try "\n\(token)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "over HTTPS with a private CA: refused (named) without --ca-file, every check passes with it; a bad --ca-file is a usage error"
    )
    func privateCA() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed, scheme: .https) { backend in
            let directory = try TemporaryDirectory(prefix: "conformance-tls")
            let token = try Self.tokenFile(directory)
            let caFile = try #require(backend.caFile)
            try await ConformanceHarness.quickHeartbeat(backend)
            let refused = try await Self.run([backend.baseURL, "--token-file", token, "--only", "3"])
            #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
            #expect(refused.stdout.contains("unknown CA"), "\(refused.stdout)")
            let trusted = try await Self.run([
                backend.baseURL, "--token-file", token, "--ca-file", caFile, "--page-limit", "40",
            ])
            #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")
            let bad = directory.path("not-a-ca.pem")
            try "not a certificate".write(toFile: bad, atomically: true, encoding: .utf8)
            let usage = try await Self.run([backend.baseURL, "--token-file", token, "--ca-file", bad])
            #expect(usage.status == 64, "\(usage.stdout)\(usage.stderr)")
            #expect(usage.stderr.contains("--ca-file"), "\(usage.stderr)")
        }
    }

    @Test("--json against repair-api-dev: exit 0, every check in the document, conforms true")
    func jsonReport() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            try await ConformanceHarness.quickHeartbeat(backend)
            let directory = try TemporaryDirectory(prefix: "conformance-token")
            let run = try await Self.run([
                backend.baseURL, "--token-file", try Self.tokenFile(directory), "--json",
                "--page-limit", "40", "--creates",
            ])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let document = try run.json()
            #expect(document["conforms"] as? Bool == true)
            let checks = try #require(document["checks"] as? [[String: Any]])
            #expect(checks.count == ConformanceCatalog.checkIDs.count)
            #expect(checks.allSatisfy { ["passed", "not_exercised"].contains($0["outcome"] as? String) })
            #expect(
                checks.allSatisfy {
                    ($0["section"] as? String)?.isEmpty == false && ($0["reason"] as? String)?.isEmpty == false
                })
            // The announcement of the writes goes to standard error, so standard output stays one JSON document.
            #expect(run.stderr.contains("  orders ord_"), "\(run.stderr)")
            #expect(!run.stdout.contains(RunningBackend.token) && !run.stderr.contains(RunningBackend.token))
        }
    }

    @Test("text output: a departure gives FAIL with its section and exit 1; --only narrows the run")
    func textReportWithADefect() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            try await ConformanceHarness.setDefects(backend, [.dropDateHeader])
            let directory = try TemporaryDirectory(prefix: "conformance-token")
            let run = try await Self.run([
                backend.baseURL, "--token-file", try Self.tokenFile(directory), "--only", "2.1",
            ])
            #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
            let lines = run.stdout.split(separator: "\n")
            #expect(
                lines.contains { $0.hasPrefix("FAIL  2.1  date-header") && $0.contains("without a Date header") },
                "\(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("PASS  2.1  auth-missing") }, "\(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("PASS  2.1  compression-unrequested") }, "\(run.stdout)")
            // The compression probe's page came gzipped for the daemon's Accept-Encoding, so the informational
            // `compression` and `compression-vary` are exercised too.
            #expect(lines.last == "7 checks: 6 passed, 1 failed, 0 not exercised, 0 skipped", "\(run.stdout)")
        }
    }

    @Test("--dry-run lists the writes and makes none")
    func dryRun() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let directory = try TemporaryDirectory(prefix: "conformance-token")
            try await ConformanceHarness.quickHeartbeat(backend)
            let run = try await Self.run([
                backend.baseURL, "--token-file", try Self.tokenFile(directory), "--dry-run",
                "--order", "ord_5",
            ])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("orders ord_5: PATCH notes"), "\(run.stdout)")
            #expect(run.stdout.contains("not written (--dry-run)"), "\(run.stdout)")
            let counters = try await ConformanceHarness.counters(backend)
            #expect(counters["patches_applied"] as? Int == 0)
            #expect(counters["messages_created"] as? Int == 0)
        }
    }

    @Test("bad input: an unknown --only, a missing token file, a URL without a scheme")
    func badInput() async throws {
        let directory = try TemporaryDirectory(prefix: "conformance-token")
        let token = try Self.tokenFile(directory)
        let unknown = try await Self.run(["http://127.0.0.1:9", "--token-file", token, "--only", "9.9"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--only 9.9 selects no check"), "\(unknown.stderr)")
        let missing = try await Self.run(["http://127.0.0.1:9", "--token-file", directory.path("absent")])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("cannot read --token-file"), "\(missing.stderr)")
        let scheme = try await Self.run(["minder.example.com", "--token-file", token])
        #expect(scheme.status == 64)
        #expect(scheme.stderr.contains("http:// or https://"), "\(scheme.stderr)")
        // With --json the refusal is also the document a CI job parses.
        let json = try await Self.run(["minder.example.com", "--token-file", token, "--json"])
        #expect(json.status == 64)
        let document = try json.json()
        #expect(document["conforms"] as? Bool == false)
        #expect((document["aborted_because"] as? String)?.contains("http:// or https://") == true, "\(json.stdout)")
    }
}
