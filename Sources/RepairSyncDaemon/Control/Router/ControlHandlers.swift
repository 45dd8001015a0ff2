/// Every handler the daemon registers: one per method of `RPC.methods` (a test holds the two lists together).
public enum ControlHandlers {
    static let all: [any ControlHandler.Type] = [
        PingHandler.self, VersionHandler.self, StatusHandler.self, SubscribeHandler.self, StatsHandler.self,
        DoctorHandler.self,
        SyncHandler.self, ResyncHandler.self, PauseHandler.self, ResumeHandler.self, ReloadHandler.self,
        QueueChangeHandler.self, PendingHandler.self, RetryHandler.self, DiscardHandler.self, ConflictsHandler.self,
        ResolveConflictHandler.self, UpdateOrderHandler.self, UpdateDeviceHandler.self, ReplyToTicketHandler.self,
        CreateClientHandler.self, CreateOrderHandler.self, CreateDeviceHandler.self,
        ListOrdersHandler.self, GetOrderHandler.self, ListDevicesHandler.self, ListClientsHandler.self,
        GetClientHandler.self, ListTicketsHandler.self, GetTicketHandler.self, DashboardStatsHandler.self,
        BackupHandler.self, PurgeHandler.self,
    ]

    /// The methods the daemon answers.
    public static var methodNames: [String] { all.map { $0.methodName } }
}
