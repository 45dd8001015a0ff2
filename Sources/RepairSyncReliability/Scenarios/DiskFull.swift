internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// Scenario 7: the store's filesystem fills up (a small tmpfs, filled with a file). Changes must be refused with a
/// clear error, nothing acknowledged may be lost, nothing refused may appear, the daemon must stay up, and once
/// space returns it must carry on by itself.
public struct DiskFull: Sendable {
    public var changes = 60

    public init(changes: Int = 60) { self.changes = changes }

    /// Why the scenario cannot run here, if it cannot.
    public static var unavailable: String? { getuid() == 0 ? nil : "mounting a small tmpfs needs root" }

    /// Writes `path` until the filesystem holding it has no room left.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        let chunk = [UInt8](repeating: 0xA5, count: 65536)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("disk-full") { workspace in
            try await ScenarioReport.measure("disk full") { report in
                try await ScenarioStack.with(workspace, orders: max(30, changes)) { server, daemon in
                    let state = (daemon.storePath as NSString).deletingLastPathComponent
                    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
                    guard await Mounts.tmpfs(at: state, options: "size=16m,mode=0700") else {
                        throw ScenarioFailure("cannot mount a tmpfs on \(state)")
                    }
                    // After a failure the daemon may still hold files: a lazy unmount (the stack kills it next).
                    defer { Mounts.detach(state) }
                    try await daemon.start()
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    _ = try await daemon.call("pause")

                    // Fill the filesystem.
                    let filler = state + "/filler"
                    Self.fill(filler)

                    var acknowledged: [Int] = []
                    var refused: [Int] = []
                    var clear = true
                    for n in 1...changes / 2 {
                        do {
                            _ = try await daemon.call(
                                "updateOrder", .object(["id": .string("ord_\(n)"), "notes": .string("disk full \(n)")]))
                            acknowledged.append(n)
                        } catch ControlClient.Failure.rpc(let error) {
                            refused.append(n)
                            if error.code != -32003 || !error.message.contains("full") {
                                clear = false
                                report.notes.append("refusal: \(error.code) \(error.message)")
                            }
                        }
                    }
                    let statusWhileFull = try? await daemon.call("status")

                    // Space returns: the daemon carries on without a restart.
                    unlink(filler)
                    var afterSpace = 0
                    for n in (changes / 2 + 1)...changes {
                        if (try? await daemon.call(
                            "updateOrder", .object(["id": .string("ord_\(n)"), "notes": .string("disk full \(n)")])))
                            != nil
                        {
                            acknowledged.append(n)
                            afterSpace += 1
                        }
                    }
                    _ = try await daemon.call("resume")
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    let alive = daemon.process?.isRunning == true

                    // A restart while the disk is full again: the daemon starts, or says the disk is full and exits
                    // — never a crash (it trapped on its HTTP client, left running, and hid the reason); with space
                    // back it starts.
                    Self.fill(filler)
                    await daemon.stop()
                    var startRefusal: String?
                    do {
                        try await daemon.start()
                    } catch {
                        startRefusal = "\(error)"
                    }
                    unlink(filler)
                    let startWhileFull =
                        startRefusal.map {
                            $0.contains("disk holding the store is full") && !$0.contains("Fatal error")
                        }
                        ?? true
                    if let startRefusal, !startWhileFull { report.notes.append("start while full: \(startRefusal)") }
                    if startRefusal != nil { try await daemon.start() }
                    await daemon.stop()
                    let orders = try await server.admin.allRecords("orders")
                    let lost = acknowledged.filter { orders["ord_\($0)"]?["notes"] as? String != "disk full \($0)" }
                        .count
                    let appeared = refused.filter { orders["ord_\($0)"]?["notes"] as? String == "disk full \($0)" }
                        .count
                    let integrity = try StoreInspector.integrityCheck(daemon.storePath)
                    await Mounts.unmount(state)
                    await server.stop()

                    report.add(
                        Figure(
                            "changes while full: acknowledged / refused",
                            "\(acknowledged.count - afterSpace) / \(refused.count)"))
                    report.add(.atLeast("changes refused while the disk was full", refused.count, 1))
                    report.add(.check("each refusal is -32003 and says the disk is full", clear))
                    report.add(.check("status answered while full", statusWhileFull != nil))
                    report.add(.count("acknowledged changes lost", lost, mustBe: 0))
                    report.add(.count("refused changes that appeared anyway", appeared, mustBe: 0))
                    report.add(
                        .count("changes refused after space returned", changes - changes / 2 - afterSpace, mustBe: 0))
                    report.add(.check("daemon up throughout, store sound", alive && integrity == "ok", integrity))
                    report.add(Figure("a start while full", startRefusal == nil ? "started" : "refused, saying why"))
                    report.add(.check("a start while full starts, or says the disk is full and exits", startWhileFull))
                }
            }
        }
    }
}
