/// How the link to the API is doing, as last measured: its round-trip time, the rate answers arrive at, and the
/// verdict drawn from them. `repairctl status` shows it (`online, slow link: 850 ms, 60 KB/s`), the metrics export it,
/// and the puller sizes its pages by it (`LinkMeter.pageSize`).
///
/// Thresholds (docs/operations.md, "Link quality"): the link turns `slow` when the round trip reaches
/// `slowRoundTrip` or the throughput falls below `slowThroughput`, and `good` again only once the round trip is under
/// `goodRoundTrip` and the throughput (when known) at least `goodThroughput` — the gap keeps a link near a threshold
/// from flapping.
public struct LinkQuality: Sendable, Hashable, Codable {
    public enum Verdict: String, Sendable, Hashable, Codable {
        case good
        case slow
    }

    /// The path's round trip: the shortest time to an answer's headers among the last `LinkMeter.roundTripWindow`
    /// requests (the shortest, so that connection set-up and the server's own work are left out).
    public var roundTripMilliseconds: Int64?
    /// Bytes per second of answer bodies on the wire: the median over the last `LinkMeter.throughputWindow` answers of
    /// at least `LinkMeter.minimumThroughputSample` bytes; nil until one arrived. It counts in the verdict from the
    /// `LinkMeter.throughputSamplesForVerdict`th such answer.
    public var throughputBytesPerSecond: Int64?
    public var verdict: Verdict
    /// The records per changes page the puller asked for last (the configured page size unless the link is slow).
    public var pageSize: Int?

    public init(
        roundTripMilliseconds: Int64?, throughputBytesPerSecond: Int64?, verdict: Verdict, pageSize: Int? = nil
    ) {
        self.roundTripMilliseconds = roundTripMilliseconds
        self.throughputBytesPerSecond = throughputBytesPerSecond
        self.verdict = verdict
        self.pageSize = pageSize
    }

    /// A round trip of this much or more makes the link slow.
    public static let slowRoundTrip: Duration = .milliseconds(400)
    /// A slow link is good again once the round trip is under this.
    public static let goodRoundTrip: Duration = .milliseconds(300)
    /// Below this many bytes per second (1 Mbit/s) the link is slow.
    public static let slowThroughput = 125_000
    /// A slow link is good again once the throughput is at least this (1.5 Mbit/s).
    public static let goodThroughput = 187_500

    /// The verdict after new figures, starting from `previous` (nil: none yet).
    static func verdict(previous: Verdict?, roundTrip: Duration?, throughput: Double?) -> Verdict {
        switch previous ?? .good {
        case .good:
            if let roundTrip, roundTrip >= slowRoundTrip { return .slow }
            if let throughput, throughput < Double(slowThroughput) { return .slow }
            return .good
        case .slow:
            let fastEnough = roundTrip.map { $0 < goodRoundTrip } ?? true
            let wideEnough = throughput.map { $0 >= Double(goodThroughput) } ?? true
            return fastEnough && wideEnough ? .good : .slow
        }
    }
}
