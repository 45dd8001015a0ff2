internal import RepairSyncEngine
internal import RepairSyncModels

extension DaemonConfiguration {
    /// The effective configuration as YAML-like `key: value` lines, in the order of the documentation, for
    /// `repairsyncd --check-config` and the start-up log. The token is never shown, only where it comes from.
    public var rendered: String {
        func text(_ duration: Duration) -> String {
            let milliseconds =
                duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            for (unit, factor) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1000)]
            where milliseconds >= factor && milliseconds % factor == 0 {
                return "\(milliseconds / factor)\(unit)"
            }
            return milliseconds == 0 ? "0s" : "\(milliseconds)ms"
        }
        let lines: [(String, String)] =
            [
                ("api.base_url", api.baseURL),
                ("api.token_file", "\(api.tokenFile)  # token \(token)"),
                ("api.allow_insecure_http", "\(api.allowInsecureHTTP)"),
                ("api.request_timeout", text(api.requestTimeout)),
                ("api.retry_after_cap", text(api.retryAfterCap)),
            ] + api.transport.renderedLines + [
                ("store.path", store.path),
                ("store.group_readable", "\(store.groupReadable)"),
                ("store.group_writable", "\(store.groupWritable)"),
                (
                    "store.passcode_key_file",
                    passcodeKey == nil ? "(none: passcodes are not stored)" : "key \(passcodeKey!)"
                ),
                ("control.socket", control.socket),
                ("control.group", control.group ?? "(the daemon's group)"),
                ("control.public_status", "\(control.publicStatus)"),
                ("control.max_connections", "\(control.maxConnections)"),
                ("control.max_connections_per_uid", "\(control.maxConnectionsPerUID)"),
                ("control.max_line_bytes", "\(control.maxLineBytes)"),
                ("sync.interval", text(sync.interval)),
                ("sync.page_size", "\(sync.pageSize)"),
                ("sync.shutdown_grace", text(sync.shutdownGrace)),
                ("sync.push_debounce", text(sync.pushDebounce)),
                ("sync.events", "\(sync.events)"),
            ] + SyncCollection.pullOrder.map { ("sync.max_age.\($0.name)", text(sync.maxAge[$0] ?? .zero)) } + [
                ("retry.base", text(retry.base)),
                ("retry.cap", text(retry.cap)),
                ("retry.max_attempts", "\(retry.maxAttempts)"),
            ] + conflicts.sorted { $0.key.name < $1.key.name }.map { ("conflicts.\($0.key.name)", $0.value.rawValue) }
            + pushPriorities.map { ("priority.\($0.collection.name).\($0.subject)", $0.priority.name) } + [
                ("probe.mode", probe.mode.rawValue),
                ("probe.offline_interval", text(probe.offlineInterval)),
                ("probe.online_interval", text(probe.onlineInterval)),
                ("probe.debounce", text(probe.debounce)),
                ("probe.timeout", text(probe.timeout)),
                ("log.level", logLevel.rawValue),
                ("retention.days", retentionDays == 0 ? "0  # off" : "\(retentionDays)"),
                ("metrics.textfile", metricsTextfile ?? "(off)"),
                ("metrics.listen", metricsListen.map { "\($0.host):\($0.port)" } ?? "(off)"),
            ]
        var output = lines.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        for key in unknownKeys { output += "\n# unknown key, ignored: \(key)" }
        return output
    }
}
