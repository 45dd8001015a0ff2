import Foundation
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// The package's binaries (Swift runtime linked statically, stripped) beside the dynamic release build of the same
/// commit (stripped the same way): sizes, start-up time and idle RSS. `scripts/bench --package` runs it and writes the
/// table between the package markers of docs/performance.md.
struct PackageBench {
    let deb: String
    /// The dynamic release binaries (`swift build -c release`).
    let dynamicBin: String
    let work: String
    let idleSeconds: Int
    /// When the RSS is read first: before the daemon hands back idle memory (30 s after its last run).
    static let earlySeconds = 5

    static let begin = "<!-- package:begin (written by scripts/bench --package) -->"
    static let end = "<!-- package:end -->"

    struct Row {
        var what: String
        var packaged: String
        var dynamic: String
    }

    func run() async throws -> [Row] {
        let unpacked = work + "/package-root"
        try Self.run(["/usr/bin/dpkg-deb", "-x", deb, unpacked])
        let dynamic = work + "/dynamic-stripped"
        try FileManager.default.createDirectory(atPath: dynamic, withIntermediateDirectories: true)
        var rows: [Row] = []
        let debBytes = try Self.size(deb)
        let installed = (try Self.output(["/usr/bin/dpkg-deb", "-f", deb, "Installed-Size"]))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        rows.append(
            Row(
                what: "package",
                packaged: "\(Self.mib(debBytes)) .deb, \(Self.mib((Int(installed) ?? 0) * 1024)) installed",
                dynamic: "—"))
        var runtimeBytes = 0
        // Every binary the package ships: repair-api-conformance (for backend teams) too.
        for tool in ["repairsyncd", "repairctl", "repair-api-conformance"] {
            try? FileManager.default.removeItem(atPath: dynamic + "/" + tool)
            try FileManager.default.copyItem(atPath: dynamicBin + "/" + tool, toPath: dynamic + "/" + tool)
            try Self.run(["/usr/bin/strip", "--strip-unneeded", "--remove-section=.comment", dynamic + "/" + tool])
            rows.append(
                Row(
                    what: "`\(tool)`, stripped", packaged: Self.mib(try Self.size(unpacked + "/usr/bin/" + tool)),
                    dynamic:
                        "\(Self.mib(try Self.size(dynamic + "/" + tool))) (unstripped \(Self.mib(try Self.size(dynamicBin + "/" + tool))))"
                ))
            runtimeBytes = max(runtimeBytes, try Self.toolchainLibraryBytes(dynamic + "/" + tool))
        }
        rows.append(
            Row(
                what: "Swift runtime loaded from the toolchain", packaged: "none (linked in)",
                dynamic: "\(Self.mib(runtimeBytes)) of toolchain libraries (libswiftCore, Foundation, ICU, …)"))

        Log.say("==> start-up time, packaged and dynamic")
        for (label, arguments) in [
            ("`repairsyncd --version`", ["repairsyncd", "--version"]),
            ("`repairctl --version`", ["repairctl", "--version"]),
        ] {
            let packaged = try Self.medianStart([unpacked + "/usr/bin/" + arguments[0]] + arguments.dropFirst())
            let dynamicTime = try Self.medianStart([dynamic + "/" + arguments[0]] + arguments.dropFirst())
            rows.append(
                Row(
                    what: "start-up, \(label) (median of 40)", packaged: Format.ms(packaged),
                    dynamic: Format.ms(dynamicTime)))
        }

        Log.say("==> idle RSS, packaged and dynamic")
        let server = try await APIServerProcess(
            database: work + "/package-backend.sqlite", orders: 1000, logPath: work + "/package-backend.log")
        defer { server.process.signal(SIGKILL) }
        var idle: [String: (rss: Double, anonymous: Double, early: Double, badge: Double)] = [:]
        for (name, daemonBinary, repairctl) in [
            ("packaged", unpacked + "/usr/bin/repairsyncd", unpacked + "/usr/bin/repairctl"),
            ("dynamic", dynamic + "/repairsyncd", dynamic + "/repairctl"),
        ] {
            let daemon = try DaemonProcess(
                directory: work + "/daemon-\(name)", baseURL: server.baseURL, token: APIServerProcess.token)
            try daemon.writeConfig("log:\n  level: notice", pageSize: BenchRun.pageSize)
            daemon.binary = daemonBinary
            defer {
                daemon.process?.signal(SIGKILL)
                daemon.notify.close()
            }
            try BenchRun.requireSuccess(try await BenchRun.startAndWaitForFirstRun(daemon).status)
            guard try await daemon.waitForStatus(timeout: 60, { $0["state"]?.stringValue == "idle" }) != nil else {
                throw BenchError("the \(name) daemon did not go idle")
            }
            // Before the daemon hands memory back (30 s after its last run), then after.
            sleep(UInt32(Self.earlySeconds))
            let early = ProcessStats.residentMiB(daemon.pid)
            sleep(UInt32(max(0, idleSeconds - Self.earlySeconds)))
            let rss = ProcessStats.residentMiB(daemon.pid)
            let anonymous = ProcessStats.anonymousResidentMiB(daemon.pid)
            let badge = try Self.medianStart(
                [repairctl, "status", "--badge"], environment: ["REPAIRSYNCD_SOCKET": daemon.socketPath])
            idle[name] = (rss, anonymous, early, badge)
            Log.say(
                "    \(name): RSS \(Format.mib(early)) after \(Self.earlySeconds) s, \(Format.mib(rss)) (anonymous \(Format.mib(anonymous))) after \(idleSeconds) s, badge \(Format.ms(badge))"
            )
            await daemon.stop()
        }
        await server.stop()
        let packaged = idle["packaged"]!
        let dynamicIdle = idle["dynamic"]!
        rows.append(
            Row(
                what: "start-up, `repairctl status --badge` against the daemon (median of 40)",
                packaged: Format.ms(packaged.badge),
                dynamic: Format.ms(dynamicIdle.badge)))
        rows.append(
            Row(
                what:
                    "RSS of `repairsyncd` after its first sync (5,500 records), \(Self.earlySeconds) s idle (memory not yet handed back)",
                packaged: Format.mib(packaged.early), dynamic: Format.mib(dynamicIdle.early)))
        rows.append(
            Row(
                what: "idle RSS of `repairsyncd` after its first sync (5,500 records), \(idleSeconds) s idle",
                packaged: "\(Format.mib(packaged.rss)) (anonymous \(Format.mib(packaged.anonymous)))",
                dynamic: "\(Format.mib(dynamicIdle.rss)) (anonymous \(Format.mib(dynamicIdle.anonymous)))"))
        return rows
    }

    func markdown(_ rows: [Row], commit: String, machine: Machine) -> String {
        var text = """
            Measured \(ISO8601DateFormatter().string(from: Date())) at commit `\(commit)` on \(machine.summary): \
            `\(URL(fileURLWithPath: deb).lastPathComponent)` (release, `--static-swift-stdlib`, stripped) beside the \
            dynamic release build of the same commit, stripped the same way.

            | | package (static Swift runtime) | dynamic build (toolchain runtime) |
            | --- | --- | --- |

            """
        for row in rows { text += "| \(row.what) | \(row.packaged) | \(row.dynamic) |\n" }
        return text
    }

    func write(_ rows: [Row], into path: String, commit: String) throws {
        let section = Self.begin + "\n" + markdown(rows, commit: commit, machine: Machine.current()) + Self.end
        var text = try String(contentsOfFile: path, encoding: .utf8)
        if let start = text.range(of: Self.begin), let stop = text.range(of: Self.end),
            start.lowerBound < stop.lowerBound
        {
            text.replaceSubrange(start.lowerBound..<stop.upperBound, with: section)
        } else {
            text += "\n## The package\n\n" + section + "\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    // MARK: Helpers

    /// Median wall time of 40 runs (after 3 to warm the page cache), process start included.
    static func medianStart(_ arguments: [String], environment: [String: String] = [:]) throws -> Double {
        var samples = Samples()
        for round in 0..<43 {
            let time = try Spawn.time(arguments, environment: environment)
            if round >= 3 { samples.append(time) }
        }
        return samples.median
    }

    /// The bytes of the shared libraries `binary` loads from outside the system's library directories.
    static func toolchainLibraryBytes(_ binary: String) throws -> Int {
        let listing = try output(["/usr/bin/ldd", binary])
        return try listing.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard let arrow = parts.firstIndex(of: "=>"), arrow + 1 < parts.count else { return nil }
            let path = String(parts[arrow + 1])
            return path.hasPrefix("/lib") || path.hasPrefix("/usr/lib") ? nil : path
        }.reduce(0) { $0 + (try size(URL(fileURLWithPath: $1).resolvingSymlinksInPath().path)) }
    }

    static func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    static func run(_ arguments: [String]) throws {
        _ = try output(arguments)
    }

    /// Runs a command to its end and returns its standard output; throws with its output when it fails.
    static func output(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw BenchError("\(arguments.joined(separator: " ")): \(text)") }
        return text
    }
}
