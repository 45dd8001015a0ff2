internal import Logging
internal import RepairSyncEngine

/// What the control handlers work with: the engine (asked, never reached into), the scheduler, the metrics, and the
/// daemon's own powers — its configuration, reloading it, stopping.
struct ControlServices: Sendable {
    let engine: SyncEngine
    let scheduler: SchedulerService
    let metrics: SyncMetrics
    let logger: Logger
    /// The configuration file the daemon runs with.
    let configPath: String
    /// The configuration in force (the last one loaded successfully).
    let configuration: @Sendable () -> DaemonConfiguration
    /// Loads the file again; the keys it does not know, or why it was refused (the running one then stays).
    let reload: @Sendable () async -> Result<[String], ConfigurationError>
    /// Ends the daemon (after `purge`).
    let shutdown: @Sendable () async -> Void
}
