import Foundation
import RepairSyncDaemon
import RepairSyncTestSupport
import Testing

/// `sync.events`: on by default, `false` turns the stream off, anything else is a configuration error naming the key
/// (the daemon exits 78 with it: DaemonEndToEndTests, "a bad configuration exits 78").
@Suite("Configuration: sync.events")
struct EventsConfigurationTests {
    func load(_ sync: String, environment: [String: String] = [:]) async throws -> DaemonConfiguration {
        let directory = try TemporaryDirectory(prefix: "events-config")
        try TokenFile.write(directory.path("token"))
        try "api:\n  base_url: https://api.example.com\n  token_file: \(directory.path("token"))\n\(sync)"
            .write(toFile: directory.path("config.yaml"), atomically: true, encoding: .utf8)
        return try await ConfigurationLoader.load(path: directory.path("config.yaml"), environment: environment)
    }

    @Test("on by default; false and REPAIRSYNCD_SYNC_EVENTS turn it off; the rendering shows it")
    func values() async throws {
        #expect(try await load("").sync.events == true)
        let off = try await load("sync:\n  events: false\n")
        #expect(off.sync.events == false)
        #expect(off.rendered.contains("sync.events"))
        #expect(try await load("", environment: ["REPAIRSYNCD_SYNC_EVENTS": "off"]).sync.events == false)
    }

    @Test("a malformed value names sync.events")
    func malformed() async throws {
        do {
            _ = try await load("sync:\n  events: sometimes\n")
            Issue.record("sync.events: sometimes was accepted")
        } catch let error as ConfigurationError {
            #expect(error.key == "sync.events")
            #expect(error.description.contains("sometimes"))
        }
    }
}

/// A token file as the loader requires it (0600).
enum TokenFile {
    static func write(_ path: String) throws {
        try "test-token".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
