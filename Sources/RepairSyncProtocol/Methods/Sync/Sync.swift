public import RepairSyncModels

extension RPC {
    /// Start a run now: push, then pull `collections` (all when absent). With `wait`, answer with the run's report
    /// once it ends; while offline, `wait` first has the probe check the API (-32005 if it is still unreachable).
    public enum Sync: ControlMethod {
        public static let name = "sync"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var collections: [SyncCollection]?
            public var wait: Bool?

            public init(collections: [SyncCollection]? = nil, wait: Bool? = nil) {
                self.collections = collections
                self.wait = wait
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case collections, wait
            }
        }

        /// `{"started": true}` without `wait`; the run's report with it.
        public enum Result: Codable, Sendable, Hashable {
            case started
            case finished(SyncRunReport)

            enum CodingKeys: String, CodingKey {
                case started
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                if container.contains(.started) {
                    self = .started
                } else {
                    self = .finished(try SyncRunReport(from: decoder))
                }
            }

            public func encode(to encoder: any Encoder) throws {
                switch self {
                case .started:
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(true, forKey: .started)
                case .finished(let report):
                    try report.encode(to: encoder)
                }
            }
        }
    }
}
