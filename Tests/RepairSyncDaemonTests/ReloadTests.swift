import Foundation
import Testing

@testable import RepairSyncDaemon

/// What a reload says still needs a restart (`repairctl reload`, SIGHUP): every setting the running daemon fixed at
/// its start, judged against that start.
@Suite("Reload")
struct ReloadTests {
    @Test(
        "priority, retention and metrics need a restart, the schedule and the log level do not"
    )
    func restartKeys() async throws {
        let files = try ConfigurationTests.Files(ConfigurationTests.minimal)
        let started = try await files.load()
        let text =
            ConfigurationTests.minimal.replacingOccurrences(of: "TOKEN_FILE", with: files.tokenPath) + """

                retention:
                  days: 30
                priority:
                  orders.notes: critical
                metrics:
                  textfile: /var/lib/node_exporter/textfile/repairsyncd.prom
                sync:
                  interval: 5m
                log:
                  level: debug
                """
        try text.write(toFile: files.configPath, atomically: true, encoding: .utf8)
        let changed = try await files.load()
        let keys = Daemon.restartKeys(from: started, to: changed)
        #expect(Set(keys) == ["priority", "retention", "metrics"], "\(keys)")
        #expect(Daemon.restartKeys(from: started, to: started).isEmpty)
    }
}
