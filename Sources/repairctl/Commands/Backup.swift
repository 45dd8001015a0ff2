import ArgumentParser
import Foundation
import RepairSyncControl

#if canImport(Glibc)
    import Glibc
#endif

/// `repairctl backup FILE`: a consistent copy of the store, taken while the daemon runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the local replica to FILE (consistent, while the daemon runs; readable only by you).",
        discussion: "Restore: docs/operations.md, \"Backing up and restoring the store\".")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Where to write the copy (must not exist).") var file: String

    func run() throws {
        // Created 0600 before a byte arrives, whatever the umask, and never over an existing file.
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            Output.error("cannot create \(file): \(String(cString: strerror(errno)))")
            throw ExitCode.failure
        }
        fchmod(descriptor, 0o600)
        let output = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let client = try options.connect()
        var written = 0
        let result: JSONValue
        do {
            result = try client.call("backup") { method, params in
                guard method == "backupChunk", let text = params["data"]?.stringValue, let data = Data(base64Encoded: text)
                else { return }
                output.write(data)
                written += data.count
            }
        } catch {
            try? output.close()
            unlink(file)
            Output.error(error.description)
            if case .protocolError = error { throw ExitCode(69) }
            throw ExitCode.failure
        }
        try output.close()
        guard result["bytes"]?.intValue == written else {
            unlink(file)
            Output.error("the backup was cut short (\(written) of \(Output.cell(result["bytes"])) bytes); nothing kept")
            throw ExitCode.failure
        }
        if options.printJSONIfAsked(.object([("file", .string(file)), ("bytes", .number(written))])) { return }
        print("wrote \(written) bytes to \(file) (integrity ok)")
    }
}
