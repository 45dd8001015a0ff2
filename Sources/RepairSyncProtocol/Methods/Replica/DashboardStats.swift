public import RepairSyncModels

extension RPC {
    /// The dashboard figures of a period as the last full sync fetched them, and their age; -32001 before the first.
    public enum DashboardStats: ControlMethod {
        public static let name = "dashboardStats"
        public static let access = Access.group

        public enum Period: String, Codable, Sendable, Hashable, CaseIterable {
            case today, week, month
        }

        public struct Params: ControlParams, Hashable {
            /// Default `today`.
            public var period: Period?

            public init(period: Period? = nil) { self.period = period }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case period
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var period: Period
            /// The API's figures, in its shape.
            public var stats: RepairSyncModels.DashboardStats
            public var fetchedAt: Timestamp
            public var ageSeconds: Int64

            public init(period: Period, stats: RepairSyncModels.DashboardStats, fetchedAt: Timestamp, ageSeconds: Int64)
            {
                self.period = period
                self.stats = stats
                self.fetchedAt = fetchedAt
                self.ageSeconds = ageSeconds
            }
        }
    }
}
