import BackendTestSupport
import Foundation
import GRDB
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Device passcodes at rest: sealed with AES-GCM under the daemon's key, or not stored without one.
@Suite("Passcodes", .timeLimit(.minutes(2)))
struct PasscodeTests {
    static let key = Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
    static let passcode = "zebra-7519-open-sesame"

    @Test("with a key, passcodes are sealed: the raw SQLite files never contain them; the key opens them")
    func sealed() async throws {
        let cipher = try PasscodeCipher(keyText: Self.key)
        var configuration = EngineHarness.configuration()
        configuration.passcodeCipher = cipher
        try await EngineHarness.with(configuration: configuration) { h in
            try await h.serverEdit("devices", "dev_2", #"{"passcode":"\#(Self.passcode)"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            // A pushed change brings the device back through the acknowledgement path too.
            try await h.engine.update(.devices, id: "dev_2", fields: ["diagnosis": "sealed"])
            #expect(await h.engine.sync([]).pushed == 1)

            let stored = try h.strings("SELECT passcode FROM devices WHERE id = 'dev_2'").first ?? ""
            #expect(stored.hasPrefix("aesgcm1:"), "\(stored)")
            #expect(cipher.open(stored) == Self.passcode)
            let unsealed = try h.integer(
                "SELECT COUNT(*) FROM devices WHERE passcode IS NOT NULL AND passcode NOT LIKE 'aesgcm1:%'")
            #expect(unsealed == 0)
            let path = h.directory.path("replica.sqlite")
            for file in [path, path + "-wal"] {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                #expect(bytes.range(of: Data(Self.passcode.utf8)) == nil, "\(file) holds the passcode in clear")
            }
            let other = try PasscodeCipher(keyText: String(repeating: "ab", count: 32))
            #expect(other.open(stored) == nil, "another key opens nothing")
        }
    }

    @Test(
        "a device booked in whose passcode the daemon's key no longer opens (a restore without its key) is not sent without it: dead, saying why; sent with it once the key is back"
    )
    func createWhoseKeyIsGone() async throws {
        let configuration = {
            var configuration = EngineHarness.configuration()
            configuration.passcodeCipher = try? PasscodeCipher(keyText: Self.key)
            return configuration
        }()
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let id = "dddddddd-0000-4000-8000-00000000c0de"
            _ = try await h.engine.createDevice(
                .init(
                    id: id,
                    fields: ["order_id": "ord_5", "type": "phone", "issue": "cracked", "passcode": Self.passcode]))

            // The workstation restarted with another key, or none.
            for key in [String(repeating: "ab", count: 32), nil] {
                var replaced = configuration
                replaced.passcodeCipher = try key.map { try PasscodeCipher(keyText: $0) }
                let engine = try h.reopenedEngine(configuration: replaced)
                _ = await engine.sync([])
                let entry = try #require(try engine.outboxEntries().first { $0.recordId == id })
                #expect(entry.state == .dead, "\(entry)")
                #expect(entry.lastError?.contains("passcode key") == true, "\(entry.lastError ?? "")")
                let onServer = try await h.backend.get("/api/v1/devices/\(id)")
                #expect(onServer.status == 404, "nothing was sent")
                try await engine.retryDead(seq: entry.seq)
            }
            // The key it was sealed with, back.
            let engine = try h.reopenedEngine(configuration: configuration)
            #expect(await engine.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Device.self, "devices", id).passcode == Self.passcode)
        }
    }

    @Test("without a key, passcodes are not stored at all")
    func notStored() async throws {
        try await EngineHarness.with { h in
            try await h.serverEdit("devices", "dev_2", #"{"passcode":"\#(Self.passcode)"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.integer("SELECT COUNT(*) FROM devices") > 0)
            #expect(try h.integer("SELECT COUNT(*) FROM devices WHERE passcode IS NOT NULL") == 0)
        }
    }

    @Test("a key must be 32 bytes, as base64 or 64 hex digits")
    func keyFormats() {
        #expect(throws: Never.self) { try PasscodeCipher(keyText: Self.key) }
        #expect(throws: Never.self) { try PasscodeCipher(keyText: String(repeating: "0f", count: 32) + "\n") }
        #expect(throws: PasscodeCipher.KeyError.self) { try PasscodeCipher(keyText: "short") }
        #expect(throws: PasscodeCipher.KeyError.self) {
            try PasscodeCipher(keyText: Data(count: 16).base64EncodedString())
        }
    }
}
