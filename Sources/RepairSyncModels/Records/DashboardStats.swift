#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The backend's dashboard figures for one period, with comparisons against earlier periods.
///
/// ```json
/// {"period":"week",
///  "devices":{"current":42,"comparisons":[{"period":"previous_week","count":38,"change":4,"change_percent":10.53}]},
///  "revenue":{"current":"5120.50","comparisons":[{"period":"previous_week","total":"4800","change":"320.50",
///             "change_percent":6.68}]}, ...}
/// ```
public struct DashboardStats: Codable, Hashable, Sendable {
    public var period: String
    public var devices: CountMetric
    public var revenue: RevenueMetric
    public var clients: CountMetric
    public var newClients: CountMetric
    public var returningClients: CountMetric

    public init(
        period: String, devices: CountMetric, revenue: RevenueMetric, clients: CountMetric,
        newClients: CountMetric, returningClients: CountMetric
    ) {
        self.period = period
        self.devices = devices
        self.revenue = revenue
        self.clients = clients
        self.newClients = newClients
        self.returningClients = returningClients
    }

    public enum CodingKeys: String, CodingKey {
        case period, devices, revenue, clients
        case newClients = "new_clients"
        case returningClients = "returning_clients"
    }

    /// A counted figure (devices, clients) for the period and its comparisons.
    public struct CountMetric: Codable, Hashable, Sendable {
        public var current: Int
        public var comparisons: [Comparison]

        public init(current: Int, comparisons: [Comparison]) {
            self.current = current
            self.comparisons = comparisons
        }

        public struct Comparison: Codable, Hashable, Sendable {
            public var period: String
            public var count: Int
            public var change: Int
            /// Exact percentage; nil when the earlier period was zero.
            public var changePercent: Decimal?

            public init(period: String, count: Int, change: Int, changePercent: Decimal?) {
                self.period = period
                self.count = count
                self.change = change
                self.changePercent = changePercent
            }

            public enum CodingKeys: String, CodingKey {
                case period, count, change
                case changePercent = "change_percent"
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(period, forKey: .period)
                try c.encode(count, forKey: .count)
                try c.encode(change, forKey: .change)
                try c.encode(changePercent, forKey: .changePercent)
            }
        }
    }

    /// Revenue for the period and its comparisons, in exact money.
    public struct RevenueMetric: Codable, Hashable, Sendable {
        public var current: Money
        public var comparisons: [Comparison]

        public init(current: Money, comparisons: [Comparison]) {
            self.current = current
            self.comparisons = comparisons
        }

        public struct Comparison: Codable, Hashable, Sendable {
            public var period: String
            public var total: Money
            public var change: Money
            public var changePercent: Decimal?

            public init(period: String, total: Money, change: Money, changePercent: Decimal?) {
                self.period = period
                self.total = total
                self.change = change
                self.changePercent = changePercent
            }

            public enum CodingKeys: String, CodingKey {
                case period, total, change
                case changePercent = "change_percent"
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(period, forKey: .period)
                try c.encode(total, forKey: .total)
                try c.encode(change, forKey: .change)
                try c.encode(changePercent, forKey: .changePercent)
            }
        }
    }
}
