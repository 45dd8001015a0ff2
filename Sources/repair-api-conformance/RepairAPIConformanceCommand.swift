import ArgumentParser
import Foundation
import RepairAPIConformance
import RepairSyncModels

/// `repair-api-conformance`: checks a server against docs/api.md, clause by clause, for a backend team and its CI.
@main
struct RepairAPIConformanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair-api-conformance",
        abstract: "Check a Repair Minder API server against the contract repairsyncd relies on (docs/api.md).",
        discussion: """
            Point it at a test tenant: it reads every changes feed twice, then PATCHes one order and one device \
            (a free-text field, restored at the end), adds one staff-only message to one ticket and sends creates \
            the contract refuses, naming them before it writes; --creates also creates a client, an order and a \
            device, which stay. --dry-run makes no write and lists the ones it would make. Each check prints its \
            section of docs/api.md and a one-line reason. Exit status: 0 when every exercised check passes, 1 \
            otherwise (checks that nothing exercised, such as a 429, neither pass nor fail).
            """,
        version: ProductInfo.version
    )

    @Argument(
        help: ArgumentHelp(
            "The server's address, e.g. https://minder.example.com (with or without /api/v1).",
            valueName: "base-url"))
    var baseURL: String

    @Option(
        help: ArgumentHelp(
            "A file holding the API token alone on its first line (never printed).",
            valueName: "path"))
    var tokenFile: String

    @Flag(help: "Print the report as one JSON document (for CI); announcements go to standard error.")
    var json = false

    @Option(
        name: .customLong("only"),
        help: ArgumentHelp(
            "Run only the checks of this section of docs/api.md (4.2, 5) or this check (feed-paging, money); repeatable.",
            valueName: "section"))
    var only: [String] = []

    @Flag(help: "Write nothing: run the read-only checks and list the records and writes the others would use.")
    var dryRun = false

    @Flag(
        help: ArgumentHelp(
            "Also create one client, one order and one device (section 4.7), which stay: the API deletes no record. "
                + "Without it, only creates the contract refuses are sent (they create nothing)."))
    var creates = false

    @Option(help: "The limit of the first read of each feed; the second read uses 1000.")
    var pageLimit = 100

    @Option(help: ArgumentHelp("Seconds before a request is given up.", valueName: "seconds"))
    var timeout = 30

    @Option(
        help: ArgumentHelp(
            "Seconds the run may wait in all for the server's Retry-After (429, 503) before it stops waiting refusals out.",
            valueName: "seconds"))
    var maxWait = 600

    @Option(
        help: ArgumentHelp("The order to PATCH (default: the last of its feed, the latest changed).", valueName: "id"))
    var order: String?

    @Option(
        help: ArgumentHelp("The device to PATCH (default: the last of its feed, the latest changed).", valueName: "id"))
    var device: String?

    @Option(help: ArgumentHelp("The ticket to add a message to (default: the last of its feed).", valueName: "id"))
    var ticket: String?

    @Option(
        help: ArgumentHelp(
            "A PEM file of CA certificates to trust besides the system's (a test tenant behind a private CA), as the daemon's api.ca_file.",
            valueName: "file"))
    var caFile: String?

    @Option(
        help: ArgumentHelp(
            "The proxy to reach the server through (http://[user:password@]host:port or socks5://host:port), as the daemon's api.proxy.",
            valueName: "url"))
    var proxy: String?

    /// As ArgumentParser's own, but with `--json` a refused command line is also a JSON document on standard output
    /// (`conforms: false`, the reason in `aborted_because`), so that a CI job parsing the output learns why.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure, CommandLine.arguments.dropFirst().contains("--json") {
                let report = ConformanceReport.refused(because: fullMessage(for: error))
                FileHandle.standardOutput.write(Data(report.json.utf8))
            }
            exit(withError: error)
        }
    }

    func validate() throws {
        guard baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://") else {
            throw ValidationError("base-url must start with http:// or https://, e.g. https://minder.example.com")
        }
        guard (1...999).contains(pageLimit) else { throw ValidationError("--page-limit must be within 1...999") }
        guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second") }
        guard maxWait >= 0 else { throw ValidationError("--max-wait must be 0 or more seconds") }
        let unknown = options(token: "").unknownFilters
        if !unknown.isEmpty {
            let sections = Set(ConformanceCatalog.clauses.map(\.section)).sorted()
            throw ValidationError(
                "--only \(unknown.joined(separator: ", ")) selects no check; sections are \(sections.joined(separator: ", ")), "
                    + "checks are named as in the output (e.g. feed-paging, feed-paging:orders)")
        }
    }

    func run() async throws {
        let token = try readToken()
        if !json {
            FileHandle.standardOutput.write(
                Data(
                    "repair-api-conformance \(ProductInfo.version): \(baseURL) against docs/api.md (Repair Minder API v1)\n"
                        .utf8))
        }
        var custom: ConformanceTransport?
        if caFile != nil || proxy != nil {
            do {
                custom = try ConformanceTransport(baseURL: baseURL, caFile: caFile, proxy: proxy)
            } catch {
                throw ValidationError("--ca-file / --proxy: \(error)")
            }
        }
        let run =
            if let custom {
                ConformanceRun(options: options(token: token), transport: custom)
            } else {
                ConformanceRun(options: options(token: token))
            }
        let report = await run.run { line in
            let output = json ? FileHandle.standardError : FileHandle.standardOutput
            output.write(Data((line + "\n").utf8))
        }
        await custom?.shutdown()
        FileHandle.standardOutput.write(Data((json ? report.json : report.text).utf8))
        throw ExitCode(report.exitCode)
    }

    private func options(token: String) -> ConformanceOptions {
        ConformanceOptions(
            baseURL: baseURL, token: token, only: only, dryRun: dryRun, creates: creates, pageLimit: pageLimit,
            requestTimeout: .seconds(timeout), maxWait: .seconds(maxWait), orderID: order, deviceID: device,
            ticketID: ticket)
    }

    /// The first non-blank line of the token file, trimmed.
    private func readToken() throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: tokenFile, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read --token-file \(tokenFile): \(error.localizedDescription)")
        }
        guard
            let token = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { !$0.isEmpty })
        else {
            throw ValidationError("--token-file \(tokenFile) holds no token")
        }
        return token
    }
}
