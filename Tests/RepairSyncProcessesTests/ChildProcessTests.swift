import Foundation
import RepairSyncProcesses
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Child processes")
struct ChildProcessTests {
    @Test("a child inherits its standard descriptors only: no other child's pipe, nothing of the parent's")
    func onlyStandardDescriptorsAreInherited() async throws {
        // The reader of a child's output, open here for as long as that child runs.
        let holder = try ChildProcess(
            ["/bin/sleep", "30"], environment: [:], logPath: "/dev/null", pipeOutput: true)
        defer { holder.signal(SIGKILL) }
        let reader = try #require(holder.output?.fileDescriptor)
        let (status, listing) = try await ChildProcess.run(["/bin/ls", "/proc/self/fd"])
        #expect(status == 0)
        let inherited = Set(listing.split(separator: "\n").compactMap { Int32($0) })
        #expect(!inherited.contains(reader), "descriptor \(reader) leaked into another child: \(inherited.sorted())")
        // 0, 1 and 2, and the directory `ls` reads.
        #expect(inherited == [0, 1, 2, 3], "\(inherited.sorted())")
    }

    @Test("run: the output to its end, the exit status, and a child that outlives the timeout is killed")
    func runIsBounded() async throws {
        let (status, output) = try await ChildProcess.run(
            ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], mergeErrors: true)
        #expect(status == 3)
        #expect(output == "out\nerr\n")
        await #expect(throws: ChildProcess.TimedOut.self) {
            _ = try await ChildProcess.run(["/bin/sleep", "30"], timeout: 0.5)
        }
    }
}
