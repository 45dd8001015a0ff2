internal import Foundation
internal import RepairSyncProtocol

/// The checks both doctors make of the configuration: the file and its values, and the token file.
enum ConfigurationChecks {
    /// The file parses and every value is valid (secrets are not read); unknown keys are a warning.
    static func file(_ path: String, environment: [String: String]) async -> (DoctorCheck, DaemonConfiguration?) {
        do {
            let loaded = try await ConfigurationLoader.load(path: path, environment: environment, readSecrets: false)
            if loaded.unknownKeys.isEmpty { return (DoctorCheck("config", .ok, "\(path) is valid"), loaded) }
            return (
                DoctorCheck(
                    "config", .warn,
                    "\(path) is valid (unknown keys ignored: \(loaded.unknownKeys.joined(separator: ", ")))",
                    fix: "remove or correct those keys"), loaded
            )
        } catch {
            return (
                DoctorCheck(
                    "config", .fail, "\(error)", fix: "correct the key named; `repairsyncd --check-config` verifies"),
                nil
            )
        }
    }

    /// The token file: present, and private to its owner.
    static func tokenFile(_ path: String) -> DoctorCheck {
        if path.hasPrefix("(environment") {
            return DoctorCheck("token file", .ok, "the token comes from the environment")
        }
        guard let file = FileOwnership(path: path) else {
            return DoctorCheck(
                "token file", .fail, "the token file \(path) does not exist",
                fix: "write the API token to \(path), alone on one line, mode 0600")
        }
        if file.readableByOthers {
            return DoctorCheck(
                "token file", .fail, "the token file \(path) is readable by others (mode \(file.octalMode))",
                fix: "chmod 600 \(path)")
        }
        return DoctorCheck(
            "token file", .ok, "\(path): owner \(file.ownerName ?? "uid \(file.ownerID)"), mode \(file.octalMode)")
    }
}
