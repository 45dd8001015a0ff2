internal import Foundation

/// A long batch that can be stopped and taken up again (`repairsync-simulate --checkpoint FILE`): the seeds done, what
/// they reached, the failing ones and the time spent, saved as the batch goes. Only the build that wrote it may take it
/// up again: another build draws other operations from the same seeds, so the sittings would not add up to one run.
public struct SimCheckpoint: Codable, Sendable {
    public struct Failure: Codable, Sendable {
        public var seed: UInt64
        public var violation: String
    }

    /// The simulator's build (`SimCheckpoint.build`), which must match to resume.
    public var build: String
    public var first: UInt64
    public var count: Int
    /// The seeds done, as closed ranges `[low, high]`.
    public var done: [[UInt64]] = []
    public var failures: [Failure] = []
    public var coverage = SimCoverage()
    public var seconds: Double = 0
    /// How many times the batch was started (1: it ran in one go).
    public var sittings = 0

    public init(build: String, first: UInt64, count: Int) {
        self.build = build
        self.first = first
        self.count = count
    }

    public var seedsDone: Int { done.reduce(0) { $0 + Int($1[1] - $1[0] + 1) } }

    /// The seeds of the batch not done yet, in order.
    public var remaining: [UInt64] {
        var seeds: [UInt64] = []
        var next = first
        for range in done.sorted(by: { $0[0] < $1[0] }) {
            if next < range[0] { seeds += Array(next..<range[0]) }
            next = max(next, range[1] + 1)
        }
        let end = first + UInt64(count)
        if next < end { seeds += Array(next..<end) }
        return seeds
    }

    /// Adds one finished seed.
    public mutating func record(_ result: SimulationResult) {
        coverage.merge(result.coverage)
        if let violation = result.violations.first { failures.append(Failure(seed: result.seed, violation: violation)) }
        var ranges = done + [[result.seed, result.seed]]
        ranges.sort { $0[0] < $1[0] }
        var merged: [[UInt64]] = []
        for range in ranges {
            if let last = merged.last, range[0] <= last[1] + 1 {
                merged[merged.count - 1][1] = max(last[1], range[1])
            } else {
                merged.append(range)
            }
        }
        done = merged
    }

    /// The checkpoint at `path` for this batch, or a new one when there is none. Throws when the file belongs to
    /// another batch or another build.
    public static func load(path: String, build: String, first: UInt64, count: Int) throws -> SimCheckpoint {
        guard let data = FileManager.default.contents(atPath: path) else {
            return SimCheckpoint(build: build, first: first, count: count)
        }
        let saved = try JSONDecoder().decode(SimCheckpoint.self, from: data)
        guard saved.build == build else {
            throw Mismatch(
                path: path,
                reason: "it was written by another build of the simulator (\(saved.build), this one is \(build))")
        }
        guard saved.first == first, saved.count == count else {
            throw Mismatch(
                path: path, reason: "it is for \(saved.count) seeds from \(saved.first), not \(count) from \(first)")
        }
        return saved
    }

    /// Writes the checkpoint (atomically: a batch stopped while saving keeps the previous one).
    public func save(path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The batch so far, as one run's figures.
    public var batch: Simulator.Batch {
        var batch = Simulator.Batch()
        batch.seeds = seedsDone
        batch.coverage = coverage
        batch.seconds = seconds
        batch.failures = failures.map {
            SimulationResult(
                seed: $0.seed, violations: [$0.violation], operations: [], trace: [], coverage: SimCoverage())
        }
        return batch
    }

    /// What identifies a build of the simulator: a hash of its executable and of the child process it kills
    /// (`repairsync-test-helper`, found beside it).
    public static func build(executable: String) -> String {
        let helper = (executable as NSString).deletingLastPathComponent + "/repairsync-test-helper"
        return [executable, helper].map { path in
            guard let data = FileManager.default.contents(atPath: path) else { return "none" }
            // FNV-1a, 64 bits: not for security, only to tell two builds apart.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in data {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            return String(hash, radix: 16)
        }.joined(separator: "-")
    }

    public struct Mismatch: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot resume from \(path): \(reason); remove it to start the batch again" }
    }
}
