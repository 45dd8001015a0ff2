/// Latency samples in milliseconds, with nearest-rank percentiles.
struct Samples: Sendable {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) { self.values = values }

    mutating func append(_ value: Double) { values.append(value) }
    mutating func append(contentsOf other: Samples) { values += other.values }

    var count: Int { values.count }

    /// The nearest-rank percentile `p` (0…100).
    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    var median: Double { percentile(50) }
    var p99: Double { percentile(99) }
    var minimum: Double { values.min() ?? .nan }
}
