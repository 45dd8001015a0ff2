internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol

/// Scenario 4: the same device records edited locally and on the server, once under each conflict policy. A
/// quarter of the records have the same field (diagnosis) edited on both sides with the server's edit last, a quarter with the local edit
/// last, and half have different fields edited (diagnosis here, resolution there). What the server holds afterwards says what each resolution did;
/// each must match the policy and have its entry in the audit log (nothing resolved silently).
public struct ConflictStorm: Sendable {
    public var records = 500
    public static let policies = ["server-wins", "client-wins", "last-write-wins", "merge", "manual"]

    public init(records: Int = 500) { self.records = records }

    /// What a record went through: same field or different fields, and which side wrote last.
    enum Kind: CaseIterable {
        case sameFieldServerLast, sameFieldLocalLast, otherFieldServerLast, otherFieldLocalLast

        init(_ n: Int) { self = Self.allCases[n % 4] }
        var sameField: Bool { self == .sameFieldServerLast || self == .sameFieldLocalLast }
        var localLast: Bool { self == .sameFieldLocalLast || self == .otherFieldLocalLast }

        /// Whether the local edit must be on the server afterwards.
        func localKept(_ policy: String) -> Bool {
            switch policy {
            case "server-wins": false
            case "client-wins": true
            case "last-write-wins": localLast
            case "merge": !sameField || localLast
            default: true  // manual: other fields merge; the scenario decides "keep local" for every open conflict
            }
        }

        /// The audit log's outcome for this record (nil: not a conflict, both edits simply kept).
        func loggedOutcome(_ policy: String) -> String? {
            switch policy {
            case "merge", "manual": sameField ? (localKept(policy) ? "kept_local" : "kept_remote") : nil
            default: localKept(policy) ? "kept_local" : "kept_remote"
            }
        }
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("conflict-storm") { workspace in
            try await ScenarioReport.measure("conflict storm") { report in
                try await ScenarioStack.with(workspace, orders: records * 2 / 3 + 1) { server, daemon in
                    var seenEntries = Set<String>()
                    var allPassed = true
                    for (round, policy) in Self.policies.enumerated() {
                        daemon.environment["REPAIRSYNCD_CONFLICTS_DEVICES"] = policy
                        try await daemon.start()
                        _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                        _ = try await daemon.call("pause")
                        let ids = (1...records).map { "dev_\($0)" }
                        func local(_ n: Int) -> String { "r\(round) local \(n)" }
                        func remote(_ n: Int) -> String { "r\(round) server \(n)" }
                        func serverEdit(_ n: Int) async throws {
                            let field = Kind(n).sameField ? "diagnosis" : "resolution"
                            try await server.admin.edit("devices", ids[n - 1], [field: remote(n)])
                        }
                        func localEdit(_ n: Int) async throws {
                            _ = try await daemon.call(
                                "updateDevice", .object(["id": .string(ids[n - 1]), "diagnosis": .string(local(n))]))
                        }
                        for n in 1...records {
                            if Kind(n).localLast { try await serverEdit(n) } else { try await localEdit(n) }
                        }
                        for n in 1...records {
                            if Kind(n).localLast { try await localEdit(n) } else { try await serverEdit(n) }
                        }
                        _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                        if policy == "manual" {
                            let open = try await daemon.call(
                                "conflicts", .object(["open": .bool(true), "limit": .number(10_000)]))
                            for entry in open.arrayValue {
                                _ = try await daemon.call(
                                    "resolveConflict", .object(["id": entry["id"] ?? .null, "keep": .string("local")]))
                            }
                            _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                        }
                        let log = try await daemon.call("conflicts", .object(["limit": .number(10_000)])).arrayValue
                        let status = try await daemon.call("status")
                        await daemon.stop()

                        // What the server holds says what happened to each record.
                        let devices = try await server.admin.allRecords("devices")
                        var entries: [String: [JSONValue]] = [:]
                        for entry in log {
                            let id = entry["id"].map(\.serialized) ?? ""
                            guard !seenEntries.contains(id) else { continue }
                            seenEntries.insert(id)
                            entries[entry["recordId"]?.stringValue ?? "", default: []].append(entry)
                        }
                        var counts: [String: Int] = [:]
                        var wrong = 0
                        var unlogged = 0
                        var lostRemote = 0
                        for n in 1...records {
                            let kind = Kind(n)
                            let id = ids[n - 1]
                            let device = devices[id] ?? [:]
                            let localKept = device["diagnosis"] as? String == local(n)
                            if !kind.sameField, device["resolution"] as? String != remote(n) { lostRemote += 1 }
                            if localKept != kind.localKept(policy) {
                                wrong += 1
                                if report.notes.count < 8 {
                                    report.notes.append(
                                        "\(policy) \(id) \(kind): local edit \(localKept ? "kept" : "dropped")")
                                }
                            }
                            let closed = (entries[id] ?? []).filter { $0["open"] == .bool(false) }.compactMap {
                                $0["outcome"]?.stringValue
                            }
                            counts[closed.last ?? "no conflict", default: 0] += 1
                            if let expected = kind.loggedOutcome(policy), !closed.contains(expected) { unlogged += 1 }
                        }
                        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                            separator: ", ")
                        let ok =
                            wrong == 0 && unlogged == 0 && lostRemote == 0 && status["openConflicts"]?.intValue == 0
                            && status["pending"]?.intValue == 0
                        allPassed = allPassed && ok
                        report.add(
                            Figure(
                                policy, "\(summary); \(entries.values.map(\.count).reduce(0, +)) logged",
                                target: "per policy, all logged", passed: ok))
                        if unlogged > 0 {
                            report.notes.append("\(policy): \(unlogged) resolutions missing from the audit log")
                        }
                        if lostRemote > 0 {
                            report.notes.append("\(policy): \(lostRemote) server edits of another field lost")
                        }
                    }
                    report.add(.check("every resolution matches its policy and is in the audit log", allPassed))
                }
            }
        }
    }
}

extension JSONValue {
    var arrayValue: [JSONValue] {
        if case .array(let values) = self { return values }
        return []
    }
}
