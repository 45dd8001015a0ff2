import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `repairctl backup FILE`: a consistent copy of the store, taken while the daemon runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the local replica to FILE (consistent, while the daemon runs; readable only by you).",
        discussion: "Restore: docs/operations.md, \"Backing up and restoring the store\".")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Where to write the copy (must not exist).") var file: String

    func run() throws {
        // Created 0600 before a byte arrives, whatever the umask, and never over an existing file.
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            Output.error("cannot create \(file): \(String(cString: strerror(errno)))")
            throw ExitCode.failure
        }
        fchmod(descriptor, 0o600)
        var written: Int64 = 0
        var writeError: String?
        let client = try options.connect()
        let result: RPC.Backup.Result
        do {
            result = try client.call(RPC.Backup.self) { notification in
                guard writeError == nil, let chunk = notification.decode(RPC.BackupChunk.self),
                    let data = Data(base64Encoded: chunk.data)
                else { return }
                if Self.writeAll(data, to: descriptor) {
                    written += Int64(data.count)
                } else {
                    writeError = String(cString: strerror(errno))
                }
            }
        } catch {
            close(descriptor)
            unlink(file)
            throw GlobalOptions.exit(error)
        }
        let closed = fsync(descriptor) == 0 && close(descriptor) == 0
        if let writeError {
            unlink(file)
            Output.error("cannot write \(file): \(writeError); nothing kept")
            throw ExitCode.failure
        }
        guard closed, result.bytes == written else {
            unlink(file)
            Output.error("the backup was cut short (\(written) of \(result.bytes) bytes); nothing kept")
            throw ExitCode.failure
        }
        let summary: JSONValue = .object([("file", .string(file)), ("bytes", .number(String(written)))])
        if options.printJSONIfAsked(summary) { return }
        Output.line("wrote \(written) bytes to \(file) (integrity \(result.integrity))")
    }

    static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { buffer in
            var sent = 0
            while sent < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + sent, buffer.count - sent)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }
    }
}
