internal import Synchronization

/// Measures the link to the API from the requests that cross it (`TransportTiming`): the round trip, the throughput
/// of answer bodies, the verdict (`LinkQuality`), and from them the changes page size that still arrives within
/// `targetPageTime`. One meter is shared by every `APIClient` of a process (the engine's and the probe's), so health
/// checks between runs keep the round trip current.
///
/// ```swift
/// let meter = LinkMeter()
/// meter.record(TransportTiming(headers: .milliseconds(850), complete: .milliseconds(2_500), wireBytes: 100_000))
/// meter.quality?.verdict   // .slow
/// ```
public final class LinkMeter: Sendable {
    /// Requests whose shortest time to headers is the round trip.
    public static let roundTripWindow = 10
    /// Answers smaller than this say little about throughput (they fit in a few packets) and are not sampled.
    public static let minimumThroughputSample = 16 * 1024
    /// The throughput is the median of this many recent samples: one answer held up by a busy server or machine does
    /// not move it.
    public static let throughputWindow = 5
    /// Samples needed before the throughput counts in the verdict (one slow answer alone does not make a slow link).
    public static let throughputSamplesForVerdict = 3
    /// Weight of a new page in the moving average of bytes per record.
    static let smoothing = 0.3
    /// A changes page should arrive within this on any link: on a slow one the page size shrinks until it does, so a
    /// page commits (and its cursor is kept) at least this often.
    public static let defaultTargetPageTime: Duration = .seconds(5)
    /// The page size never goes below this: a round trip per 25 records is already costly on a slow link.
    public static let minimumPageSize = 25

    private struct State {
        var roundTrips: [Duration] = []
        var throughputs: [Double] = []
        var verdict: LinkQuality.Verdict?
        /// Wire bytes per record of recent changes pages, per collection (a smoothed average), and of any collection.
        var bytesPerRecord: [String: Double] = [:]
        var anyBytesPerRecord: Double?
        var lastPageSize: Int?
        var bytesReceived: Int64 = 0

        /// The median of the recent samples.
        var throughput: Double? {
            guard !throughputs.isEmpty else { return nil }
            let sorted = throughputs.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }

    private let state = Mutex(State())
    public let targetPageTime: Duration

    public init(targetPageTime: Duration = LinkMeter.defaultTargetPageTime) {
        self.targetPageTime = targetPageTime
    }

    /// The figures as last measured; nil until a request was timed.
    public var quality: LinkQuality? {
        state.withLock { state in
            guard let verdict = state.verdict else { return nil }
            return LinkQuality(
                roundTripMilliseconds: state.roundTrips.min().map(\.inMilliseconds),
                throughputBytesPerSecond: state.throughput.map { Int64($0.rounded()) }, verdict: verdict,
                pageSize: state.lastPageSize)
        }
    }

    /// Answer bytes received on the wire since start (compressed bytes for a compressed answer with a length).
    public var bytesReceived: Int64 { state.withLock { $0.bytesReceived } }

    /// Takes one request's timing into the round trip, the throughput and the verdict.
    public func record(_ timing: TransportTiming) {
        state.withLock { state in
            state.bytesReceived += Int64(timing.wireBytes)
            state.roundTrips.append(timing.headers)
            if state.roundTrips.count > Self.roundTripWindow { state.roundTrips.removeFirst() }
            if timing.wireBytes >= Self.minimumThroughputSample {
                // The body's own transfer: from the headers to its last byte (at least a millisecond).
                let seconds = max((timing.complete - timing.headers).inSeconds, 0.001)
                state.throughputs.append(Double(timing.wireBytes) / seconds)
                if state.throughputs.count > Self.throughputWindow { state.throughputs.removeFirst() }
            }
            state.verdict = LinkQuality.verdict(
                previous: state.verdict, roundTrip: state.roundTrips.min(),
                throughput: state.throughputs.count >= Self.throughputSamplesForVerdict ? state.throughput : nil)
        }
    }

    /// Remembers a changes page's size on the wire per record, for the next page size of `collection`.
    public func recordPage(collection: String, wireBytes: Int, records: Int) {
        guard records > 0, wireBytes > 0 else { return }
        let sample = Double(wireBytes) / Double(records)
        state.withLock { state in
            state.bytesPerRecord[collection] =
                state.bytesPerRecord[collection].map { $0 + Self.smoothing * (sample - $0) } ?? sample
            state.anyBytesPerRecord = state.anyBytesPerRecord.map { $0 + Self.smoothing * (sample - $0) } ?? sample
        }
    }

    /// Records per page for the next changes request of `collection`: `configured`, unless a page that size would
    /// take longer than `targetPageTime` on the link as measured (round trip plus its bytes at the throughput); then
    /// the size that fits, rounded down to a multiple of `minimumPageSize`, never below it.
    public func pageSize(for collection: String, configured: Int) -> Int {
        state.withLock { state in
            let size = Self.pageSize(
                configured: configured, target: targetPageTime, roundTrip: state.roundTrips.min(),
                throughput: state.throughput,
                bytesPerRecord: state.bytesPerRecord[collection] ?? state.anyBytesPerRecord)
            state.lastPageSize = size
            return size
        }
    }

    static func pageSize(
        configured: Int, target: Duration, roundTrip: Duration?, throughput: Double?, bytesPerRecord: Double?
    ) -> Int {
        guard let throughput, throughput > 0, let bytesPerRecord, bytesPerRecord > 0 else { return configured }
        let budget = target.inSeconds - (roundTrip?.inSeconds ?? 0)
        let fitting = budget * throughput / bytesPerRecord
        guard fitting < Double(configured) else { return configured }
        let rounded = Int(max(fitting, 0)) / minimumPageSize * minimumPageSize
        return min(configured, max(minimumPageSize, rounded))
    }
}

/// When a request's answer arrived and how big it was on the wire, from the transport that carried it.
public struct TransportTiming: Sendable, Hashable {
    /// From sending the request to its answer's headers.
    public var headers: Duration
    /// From sending the request to the last byte of its body.
    public var complete: Duration
    /// The body's size on the wire: its `Content-Length` (the compressed size of a compressed answer), else the bytes
    /// received.
    public var wireBytes: Int

    public init(headers: Duration, complete: Duration, wireBytes: Int) {
        self.headers = headers
        self.complete = complete
        self.wireBytes = wireBytes
    }
}

extension Duration {
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
