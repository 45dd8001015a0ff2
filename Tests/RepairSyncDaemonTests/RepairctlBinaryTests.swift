import Foundation
import RepairSyncControlClient
import RepairSyncProcesses
import RepairSyncProtocol
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `repairctl` as a file and as a program without a daemon: what it links, its help, its colours.
@Suite("repairctl binary", .serialized)
struct RepairctlBinaryTests {
    static let forbiddenLibraries = [
        "libsqlite3", "libsystemd", "libFoundation", "libFoundationInternationalization", "lib_FoundationICU",
        "libFoundationNetworking",
    ]
    static let forbiddenModules = [
        "NIOCore", "NIOPosix", "NIOHTTP1", "AsyncHTTPClient", "GRDB", "Hummingbird", "RepairSyncDaemon", "Foundation",
        "RepairSyncEngine", "RepairSyncStore", "RepairSyncControlServer", "Configuration", "Prometheus",
    ]

    @Test(
        "repairctl links neither libsqlite3, libsystemd nor full Foundation, and none of NIO, AsyncHTTPClient, GRDB or the daemon, dynamically or statically"
    )
    func linksOnlyTheClient() throws {
        let repairctl = try ELFFile(path: DaemonHarness.binaries.appendingPathComponent("repairctl").path)
        #expect(!repairctl.symbols.isEmpty, "the symbol table was read")
        #expect(
            repairctl.needed.contains { $0.hasPrefix("libc.so") }, "the dynamic section was read: \(repairctl.needed)")
        let linked = repairctl.links(libraries: Self.forbiddenLibraries, modules: Self.forbiddenModules)
        #expect(linked.isEmpty, "repairctl links \(linked); it needs: \(repairctl.needed)")
        // The same reading of the daemon finds them: the check can fail.
        let daemon = try ELFFile(path: DaemonHarness.binaries.appendingPathComponent("repairsyncd").path)
        let daemonLinks = Set(daemon.links(libraries: Self.forbiddenLibraries, modules: Self.forbiddenModules))
        #expect(
            daemonLinks.isSuperset(of: ["libsqlite3", "libsystemd", "NIOCore", "AsyncHTTPClient", "GRDB"]),
            "\(daemonLinks)")
    }

    /// Runs the built repairctl with `arguments` and `environment` (nothing of the test's own), output captured.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (
        status: Int32, stdout: String
    ) {
        let (status, output) = try await ChildProcess.run(
            [DaemonHarness.binaries.appendingPathComponent("repairctl").path] + arguments, environment: environment)
        return (status, output)
    }

    @Test("--help of repairctl and of every subcommand matches the snapshot")
    func helpSnapshot() async throws {
        let environment = ["COLUMNS": "100", "PATH": "/usr/bin:/bin"]
        let top = try await Self.run(["--help"], environment: environment)
        #expect(top.status == 0)
        var text = "$ repairctl --help\n" + top.stdout
        for command in Self.subcommands(of: top.stdout) {
            let help = try await Self.run(command + ["--help"], environment: environment)
            #expect(help.status == 0, "\(command)")
            text += "\n$ repairctl \(command.joined(separator: " ")) --help\n" + help.stdout
            for nested in Self.subcommands(of: help.stdout) where nested.count == 1 {
                let nestedHelp = try await Self.run(command + nested + ["--help"], environment: environment)
                text += "\n$ repairctl \((command + nested).joined(separator: " ")) --help\n" + nestedHelp.stdout
            }
        }
        try Golden.check(text, named: "repairctl-help")
    }

    /// The names under `SUBCOMMANDS:` of a help text.
    static func subcommands(of help: String) -> [[String]] {
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        // A name starts two spaces in; a description that wraps goes on further in.
        return help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).prefix {
            $0.hasPrefix("  ")
        }
        .filter { !$0.hasPrefix("   ") }.compactMap { line in
            let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
            return name.map { [$0] }
        }.filter { $0 != ["help"] }
    }

    @Test(
        "status --badge: every spelling gives the badge, anything else is ArgumentParser's, and no daemon is `offline`")
    func badgeCommandLines() async throws {
        try await DaemonHarness.with(orders: 5) { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            _ = try await h.call("updateOrder", .object(["id": .string("ord_1"), "notes": .string("badge")]))
            let environment = ["REPAIRSYNCD_SOCKET": h.socketPath, "PATH": "/usr/bin:/bin"]
            for arguments in [
                ["status", "--badge"], ["status", "--badge", "--socket", h.socketPath],
                ["status", "--socket", h.socketPath, "--badge"],
                ["status", "--socket=\(h.socketPath)", "--badge"], ["status", "--badge", "--json"],
            ] {
                let result = try await Self.run(arguments, environment: environment)
                #expect(result.status == 0 && result.stdout == "1\n", "\(arguments): \(result)")
            }
            #expect(
                try await Self.run(["status", "--badge", "--bogus"], environment: environment).status == 64,
                "ArgumentParser's usage error")
            let elsewhere = try await Self.run(
                ["status", "--badge", "--socket", h.directory.path("nothing.sock")], environment: environment)
            #expect(elsewhere.status == 0 && elsewhere.stdout == "offline\n", "a bar never breaks: \(elsewhere)")
        }
    }

    @Test("a --limit or --offset out of range is a usage error (64), found before any daemon is asked")
    func pagingOutOfRange() async throws {
        let directory = try TemporaryDirectory(prefix: "paging-usage")
        // No daemon here: a command line that got as far as connecting would exit with the connection's failure.
        let environment = ["REPAIRSYNCD_SOCKET": directory.path("nothing.sock"), "PATH": "/usr/bin:/bin"]
        for arguments in [
            // (`--offset=-1`: spelt apart, ArgumentParser takes -1 for an option and refuses it before validate.)
            ["orders", "--limit", "0"], ["devices", "--limit", "1001"], ["clients", "--offset=-1"],
            ["tickets", "--limit=-5"],
        ] {
            #expect(try await Self.run(arguments, environment: environment).status == 64, "\(arguments)")
        }
        #expect(try await Self.run(["orders", "--limit", "1000"], environment: environment).status != 64)
    }

    @Test(
        "a daemon that accepts and never answers: the badge says offline within its timeout and exits 0, leaving no process behind"
    )
    func badgeOfADaemonThatDoesNotAnswer() async throws {
        let directory = try TemporaryDirectory(prefix: "deaf-daemon")
        let path = directory.path("control.sock")
        // Listens, and never accepts or reads: the kernel completes the connection, nothing answers.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        #expect(UnixSocketAddress.with(path, { bind(listener, $0, $1) }) == 0 && listen(listener, 8) == 0)
        let started = ContinuousClock.now
        let (status, output) = try await Self.run(["status", "--badge", "--socket", path], environment: [:])
        let took = started.duration(to: .now)
        #expect(status == 0)
        #expect(output == "offline\n", "\(output)")
        #expect(took < .seconds(30), "\(took)")
    }

    @Test("colour only on a terminal, and never with NO_COLOR; a pipe gets plain text")
    func colour() async throws {
        try await DaemonHarness.with(orders: 5) { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let environment = ["REPAIRSYNCD_SOCKET": h.socketPath, "PATH": "/usr/bin:/bin"]
            let onTerminal = try PseudoTerminal.run(
                DaemonHarness.binaries.appendingPathComponent("repairctl").path, ["orders"], environment: environment)
            #expect(onTerminal.contains("\u{1B}["), "a terminal gets colour: \(onTerminal.debugDescription)")
            var noColor = environment
            noColor["NO_COLOR"] = "1"
            let plainTerminal = try PseudoTerminal.run(
                DaemonHarness.binaries.appendingPathComponent("repairctl").path, ["orders"], environment: noColor)
            #expect(plainTerminal.contains("ord_1"))
            #expect(!plainTerminal.contains("\u{1B}"), "NO_COLOR: \(plainTerminal.debugDescription)")
            let piped = try await Self.run(["orders"], environment: environment)
            #expect(piped.stdout.contains("ord_1"))
            #expect(!piped.stdout.contains("\u{1B}"), "a pipe gets no escape codes")
        }
    }
}

/// Runs a program with its standard output on a pseudo-terminal, as a person's shell would, and returns what it
/// wrote there.
enum PseudoTerminal {
    static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> String {
        // posix_openpt, unlockpt and ptsname by hand (Glibc's Swift module does not export them): the multiplexer,
        // TIOCSPTLCK to unlock the other end, TIOCGPTN for its number.
        // Close-on-exec: a child that another test spawns meanwhile must not hold the terminal open (the read below
        // ends only when no one does).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, UInt(0x4004_5431), &unlock) == 0,
            ioctl(master, UInt(0x8004_5430), &number) == 0
        else {
            throw POSIXError(.ENOTTY)
        }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        close(slave)
        // Everything the program wrote is in the terminal's buffer; once no one holds the other end, read returns
        // EIO after the last byte.
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            output += chunk[..<count]
        }
        close(master)
        return String(decoding: output, as: UTF8.self)
    }
}
