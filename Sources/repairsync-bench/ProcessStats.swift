import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What /proc says about a process: resident memory now and at its peak, and CPU time used.
enum ProcessStats {
    /// VmRSS in MiB.
    static func residentMiB(_ pid: Int32) -> Double { statusField(pid, "VmRSS:") / 1024 }

    /// RssAnon in MiB: the resident memory that is the process's own (heap, stacks), not pages of files it maps.
    static func anonymousResidentMiB(_ pid: Int32) -> Double { statusField(pid, "RssAnon:") / 1024 }

    /// VmHWM (the peak resident set) in MiB.
    static func peakResidentMiB(_ pid: Int32) -> Double { statusField(pid, "VmHWM:") / 1024 }

    /// User plus system CPU time in seconds (fields 14 and 15 of /proc/PID/stat).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Bytes the process has sent to storage so far (`write_bytes` of /proc/PID/io: pages it dirtied in files — the
    /// WAL's frames, a checkpoint's copies into the database — not what it writes to sockets).
    static func writtenBytes(_ pid: Int32) -> Double { field(pid, file: "io", "write_bytes:") }

    private static func statusField(_ pid: Int32, _ name: String) -> Double { field(pid, file: "status", name) }

    /// The number after `name` on its line of /proc/PID/`file` (0 when there is none).
    private static func field(_ pid: Int32, file: String, _ name: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let number = line.dropFirst(name.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return number.flatMap { Double($0) } ?? 0
        }
        return 0
    }
}

extension ProcessStats {
    /// Voluntary and involuntary context switches so far, per thread: each is a wake-up or a preemption.
    static func contextSwitches(_ pid: Int32) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var counts: [String: Int] = [:]
        for task in tasks {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else {
                continue
            }
            for line in text.split(separator: "\n") where line.contains("ctxt_switches:") {
                counts[task, default: 0] +=
                    Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return counts
    }

    /// Context switches between two readings (threads that ended in between are left out; new ones count whole).
    static func switches(from before: [String: Int], to after: [String: Int]) -> Int {
        after.reduce(0) { total, thread in total + thread.value - (before[thread.key] ?? 0) }
    }

    /// A process's CPU time and context switches at one moment, to tell what it spent from then on.
    struct Usage {
        let pid: Int32
        let cpuSeconds: Double
        let switches: [String: Int]
        let writtenBytes: Double

        init(_ pid: Int32) {
            self.pid = pid
            cpuSeconds = ProcessStats.cpuSeconds(pid)
            switches = ProcessStats.contextSwitches(pid)
            writtenBytes = ProcessStats.writtenBytes(pid)
        }

        /// CPU seconds, context switches and bytes written to storage since this reading.
        func spent() -> (cpuSeconds: Double, switches: Int, writtenBytes: Double) {
            (
                ProcessStats.cpuSeconds(pid) - cpuSeconds,
                ProcessStats.switches(from: switches, to: ProcessStats.contextSwitches(pid)),
                ProcessStats.writtenBytes(pid) - writtenBytes
            )
        }
    }
}
