import ArgumentParser
import Foundation
import Logging
import RepairAPIDev
import RepairSyncModels

/// `repair-api-dev`: the development backend as a program, for the demo, integration tests and benchmarks.
@main
struct RepairAPIDevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair-api-dev",
        abstract: "A development Repair Minder API server that implements docs/api.md.",
        discussion: """
            The first line on standard output is always `listening on http://HOST:PORT` (`https://` with \
            --tls-cert). One line per request goes to standard error unless --quiet.
            """,
        version: ProductInfo.version
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free port.")
    var port = 8080

    @Option(help: ArgumentHelp("SQLite file for the server's data (a temporary file by default).", valueName: "path"))
    var db: String?

    @Option(
        name: .customLong("token"),
        help: ArgumentHelp(
            "An accepted bearer token, as TOKEN or TOKEN:Display Name (repeatable).", valueName: "token"))
    var tokens: [String] = []

    @Option(
        help: ArgumentHelp(
            "A file with one accepted token per line, as TOKEN or TOKEN:Display Name.",
            valueName: "path"))
    var tokenFile: String?

    @Flag(help: "Generate a data set when the database is empty.")
    var seed = false

    @Option(help: "Orders to generate with --seed; devices 1.5×, clients ½×, tickets ½×, messages 2× as many.")
    var orders = 1000

    @Option(help: "Seed of the generator: the same value gives the same data.")
    var seedValue: UInt64 = 1

    @Flag(help: "Enable the admin surface under /admin (loopback peers only): edits, deletes, counters, faults.")
    var admin = false

    @Flag(help: "Do not log one line per request.")
    var quiet = false

    @Option(
        name: .customLong("defect"),
        help: ArgumentHelp(
            "Depart from the contract on purpose, to see repair-api-conformance catch it (repeatable): "
                + Defect.allCases.map(\.rawValue).joined(separator: ", ") + ".", valueName: "name"))
    var defects: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve HTTPS with this PEM certificate chain (the server's certificate first); needs --tls-key.",
            valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "With --tls-cert: the newest TLS version offered (1.2 or 1.3), to try clients that require a newer one.",
            valueName: "version"))
    var tlsMaxVersion: String?

    @Flag(help: "Serve no change stream: GET /api/v1/events answers 404, as a server without it would.")
    var noEvents = false

    @Option(help: ArgumentHelp("Between heartbeats on the change stream (GET /api/v1/events).", valueName: "ms"))
    var eventsHeartbeatMs = 15_000

    @Flag(
        help: "Never compress answers (by default, answers of 1 KiB or more are gzipped for clients that accept gzip).")
    var noCompression = false

    func validate() throws {
        guard (10...3_600_000).contains(eventsHeartbeatMs) else {
            throw ValidationError("--events-heartbeat-ms must be within 10...3600000")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        if let tlsMaxVersion {
            guard tlsCert != nil else { throw ValidationError("--tls-max-version needs --tls-cert") }
            guard ["1.2", "1.3"].contains(tlsMaxVersion) else {
                throw ValidationError("--tls-max-version is 1.2 or 1.3")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be within 0...65535") }
        guard orders >= 1 else { throw ValidationError("--orders must be at least 1") }
        for name in defects where Defect(rawValue: name) == nil {
            throw ValidationError(
                "--defect \(name) is not a defect; known: \(Defect.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        var lines = tokens
        if let tokenFile {
            let text: String
            do {
                text = try String(contentsOfFile: tokenFile, encoding: .utf8)
            } catch {
                throw ValidationError("cannot read --token-file \(tokenFile): \(error.localizedDescription)")
            }
            lines += text.split(whereSeparator: \.isNewline).map { String($0).trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        guard !lines.isEmpty else { throw ValidationError("give at least one accepted token: --token or --token-file") }
        var users: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            users[String(parts[0])] = parts.count > 1 ? String(parts[1]) : "API user"
        }

        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let tls = tlsCert.map {
            DevBackend.TLS(certificateChainPath: $0, privateKeyPath: tlsKey!, maximumVersion: tlsMaxVersion)
        }
        let backend = try DevBackend(
            options: .init(
                host: host, port: port, databasePath: db, tokens: users, admin: admin, logRequests: !quiet,
                defects: Set(defects.compactMap(Defect.init(rawValue:))), tls: tls, events: !noEvents,
                eventsHeartbeat: .milliseconds(eventsHeartbeatMs), compression: !noCompression))
        if seed {
            let start = ContinuousClock.now
            let options = SeedOptions(orders: orders, seedValue: seedValue)
            if try backend.seed(options) {
                let total =
                    options.orders + options.devices + options.clients + options.tickets
                    + options.tickets * options.messagesPerTicket
                FileHandle.standardError.write(Data("seeded \(total) records in \(ContinuousClock.now - start)\n".utf8))
            } else {
                FileHandle.standardError.write(Data("--seed: the database already has records; left as is\n".utf8))
            }
        }
        let (host, scheme) = (self.host, backend.options.scheme)
        do {
            try await backend.run(handlingSignals: true) { port in
                FileHandle.standardOutput.write(Data("listening on \(scheme)://\(host):\(port)\n".utf8))
            }
        } catch let error as DevBackend.TLSSetupError {
            FileHandle.standardError.write(Data("repair-api-dev: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
