/// Whether the local replica holds exactly the server's records at the server's versions.
public enum Convergence {
    public struct Result: Sendable {
        /// Records missing locally, extra locally, or at another version, over all collections.
        public var mismatches: Int
        public var records: Int
        /// The first few differences, for the report's notes.
        public var examples: [String]
    }

    public static func compare(store: String, server: AdminAPI) async throws -> Result {
        let local = try StoreInspector.versions(store)
        var mismatches = 0
        var records = 0
        var examples: [String] = []
        for table in StoreInspector.tables {
            let remote = try await server.allRecords(table)
            let mine = local[table] ?? [:]
            records += remote.count
            for (id, record) in remote {
                let version = record["version"] as? Int
                if mine[id] != version {
                    mismatches += 1
                    if examples.count < 5 {
                        examples.append(
                            "\(table)/\(id): local \(mine[id].map(String.init) ?? "missing"), server \(version.map(String.init) ?? "?")"
                        )
                    }
                }
            }
            for id in mine.keys where remote[id] == nil {
                mismatches += 1
                if examples.count < 5 { examples.append("\(table)/\(id): only local") }
            }
        }
        return Result(mismatches: mismatches, records: records, examples: examples)
    }
}
