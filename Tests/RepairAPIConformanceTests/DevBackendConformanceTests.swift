import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIConformance
import RepairAPIDev
import RepairSyncModels
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The checks against repair-api-dev, which implements docs/api.md: everything a client can provoke passes.
@Suite("Conformance of repair-api-dev")
struct DevBackendConformanceTests {
    @Test(
        "every check passes; only a 429, a 503 and a cursor expiring mid-read, which a client cannot provoke, are not exercised"
    )
    func everyCheckPasses() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            try await ConformanceHarness.deleteSome(backend)
            // The run writes to the record each feed delivers last (the latest changed).
            let order = try await ConformanceHarness.lastRecord(backend, "orders")
            let device = try await ConformanceHarness.lastRecord(backend, "devices")
            let ticket = try await ConformanceHarness.lastRecord(backend, "tickets")
            let before = try await backend.get("/api/v1/orders/\(order)").object()
            let (report, announced) = await ConformanceHarness.run(backend)

            #expect(report.failed.isEmpty, "\(report.text)")
            #expect(report.exitCode == 0)
            #expect(report.results.count == ConformanceCatalog.checkIDs.count)
            let notExercised = ConformanceHarness.ids(report.results.filter { $0.outcome == .notExercised })
            #expect(notExercised == ["feed-expired", "rate-limit", "unavailable"], "\(report.text)")
            #expect(report.count(.skipped) == 0, "\(report.text)")
            #expect(report.results.first { $0.id.clause == "tombstones" }?.outcome == .passed)
            // repair-api-dev compresses its large answers, and the tool says so (informational).
            let compression = report.results.first { $0.id.clause == "compression" }
            #expect(compression?.outcome == .passed, "\(report.text)")
            #expect(compression?.reason.contains("came gzip-compressed") == true, "\(compression?.reason ?? "")")

            // It said which records it would write to, and wrote only what it needs: per collection two PATCHes that
            // are applied (one with a bare-integer If-Match) and one that restores; three replays; two 412s; one
            // message. The refused PATCHes wrote nothing.
            #expect(announced.contains { $0.contains("orders \(order):") }, "\(announced)")
            #expect(announced.contains { $0.contains("devices \(device):") }, "\(announced)")
            #expect(announced.contains { $0.contains("tickets \(ticket):") }, "\(announced)")
            #expect(Set(report.writes.map(\.collection)) == [.clients, .orders, .devices, .tickets])
            let created = report.writes.filter { $0.what.hasPrefix("POST (create)") }
            #expect(created.count == 3, "\(report.writes)")
            for write in created {
                #expect(announced.contains { $0.contains("\(write.collection.name) \(write.id): POST (create)") })
            }
            let counters = try await ConformanceHarness.counters(backend)
            #expect(counters["patches_applied"] as? Int == 6)
            // Three PATCH or message replays, and the three creates replayed with their keys.
            #expect(counters["idempotent_replays"] as? Int == 6)
            // One client, one order, one device; each sent again once under another key (200, nothing made).
            #expect(counters["records_created"] as? [String: Int] == ["clients": 1, "orders": 1, "devices": 1])
            #expect(counters["create_replays"] as? Int == 3)
            #expect(counters["version_conflicts"] as? Int == 2)
            #expect(counters["messages_created"] as? Int == 1)
            #expect(counters["message_replays"] as? Int == 1)

            // The field it changed is back; only the version moved (by its three applied PATCHes).
            let after = try await backend.get("/api/v1/orders/\(order)").object()
            #expect(after["notes"] as? String == before["notes"] as? String)
            #expect(after["status"] as? String == before["status"] as? String)
            #expect(after["version"] as? Int == (before["version"] as? Int ?? 0) + 3)
            #expect(report.writes.allSatisfy { $0.restoration != nil }, "\(report.writes)")
            #expect(report.writes.first { $0.collection == .orders }?.restoration?.contains("restored") == true)
        }
    }

    @Test("--dry-run names the records a run writes to, and writes nothing; runs keep to the same records")
    func dryRun() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let before = try await ConformanceHarness.counters(backend)
            let (report, announced) = await ConformanceHarness.run(backend, dryRun: true)
            let after = try await ConformanceHarness.counters(backend)
            #expect(after["max_seq"] as? Int == before["max_seq"] as? Int, "the dry run wrote to the feeds")
            #expect(after["patches_applied"] as? Int == 0)
            #expect(after["messages_created"] as? Int == 0)
            #expect(announced.first?.contains("--dry-run") == true, "\(announced)")
            #expect(report.failed.isEmpty, "\(report.text)")
            // The records it changes (the creates make new ones every run).
            func targets(_ report: ConformanceReport) -> Set<String> {
                Set(
                    report.writes.filter { !$0.what.hasPrefix("POST (create)") }.map {
                        "\($0.collection.name) \($0.id)"
                    })
            }
            #expect(report.writes.filter { $0.what.hasPrefix("POST (create)") }.count == 3, "\(report.writes)")
            #expect(after["records_created"] as? [String: Int] == [:])
            #expect(targets(report).count == 3)
            let (written, _) = await ConformanceHarness.run(backend)
            #expect(targets(written) == targets(report))
            #expect(written.failed.isEmpty, "\(written.text)")
            let (again, _) = await ConformanceHarness.run(backend, dryRun: true)
            #expect(targets(again) == targets(report), "a second run picks other records")
            let skipped = ConformanceHarness.ids(report.results.filter { $0.outcome == .skipped })
            #expect(
                skipped
                    == ConformanceHarness.checks(
                        "unknown-status", "patch-if-match", "patch-stale", "patch-invalid-field", "patch-invalid-value",
                        "patch-not-object", "patch-malformed-if-match", "patch-bare-if-match", "patch-not-found",
                        "idempotency-key-format",
                        "edit-in-feed",
                        "idempotent-replay", "idempotency-reuse", "message-create", "message-dedupe", "message-in-feed",
                        "message-invalid-value", "message-not-found", "message-duplicate",
                        "create-not-object", "create-not-creatable", "create-invalid-field", "create-invalid-value",
                        "create-parent-not-found", "create-new", "create-replay", "create-duplicate",
                        "create-parent-write", "create-in-feed", "events-change"))
        }
    }

    @Test("--only runs the checks of one section and writes nothing it does not need")
    func onlyOneSection() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let (report, _) = await ConformanceHarness.run(backend, only: ["2.1"])
            #expect(
                ConformanceHarness.ids(report.results)
                    == [
                        "auth-missing", "auth-invalid", "date-header", "content-type", "compression",
                        "compression-unrequested", "compression-vary",
                    ])
            #expect(report.failed.isEmpty, "\(report.text)")
            // The compression probe's page, gzipped for the daemon's Accept-Encoding: every 2.1 check is exercised.
            #expect(report.count(.passed) == report.results.count, "\(report.text)")
            let counters = try await ConformanceHarness.counters(backend)
            #expect(counters["patches_applied"] as? Int == 0)
            // 2.1 reads no feed, only the probe's page of orders three times (gzip, identity, gzip;q=0).
            #expect(counters["pages_served"] as? [String: Int] == ["orders": 3], "\(counters)")
        }
    }

    @Test("a server that does not answer stops the run with exit status 1, every check skipped")
    func unreachable() async throws {
        // A port held by a socket that never listens: connecting is refused, and no other test can take the port.
        let socket = try ReservedPort()
        let report = await ConformanceRun(options: .init(baseURL: "http://127.0.0.1:\(socket.port)", token: "t")).run()
        #expect(report.exitCode == 1)
        #expect(report.abortedBecause?.contains("does not answer") == true)
        #expect(report.results.allSatisfy { $0.outcome == .skipped })
    }
}

/// A loopback TCP port bound by a socket that does not listen, for as long as the value lives.
final class ReservedPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard descriptor >= 0, bound else {
            if descriptor >= 0 { close(descriptor) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
