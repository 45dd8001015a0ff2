/// The control socket's methods and notifications, one type each (one file each, under `Methods/`). The catalogue
/// lists them: the daemon registers a handler for every one, docs/rpc.md documents every one (a test holds both
/// to this list).
public enum RPC {
    /// The protocol's version, answered by `version`. It goes up whenever a method, a parameter or a result key
    /// changes in a way an older client would notice.
    ///
    /// 2: outbox entries and conflicts in camelCase (`recordId`, …); `discard`; `replyToTicket` takes `id`.
    /// 3: `resync`; run reports list `resynced` collections.
    /// 4: booking in (`createClient`, `createOrder`, `createDevice`); `queueChange` kinds `client-created`,
    /// `order-created`, `device-created`; an order's `order_number` may be null (not created on the server yet);
    /// outbox entries carry `dependsOn` and `blockedBy`.
    /// 5: outbox entries carry `priority` (critical, high, normal), the class they are pushed in; the status carries
    /// `events` / `eventsSince` (the server's change stream) and `link` (round trip, throughput, verdict).
    /// 6: `queueChange` answers `outcome` (queued, already_queued, on_server, dead) and a dead change's `seq`;
    /// `pending` and `conflicts` are `group` (they carry the records' values).
    public static let protocolVersion = 6

    public static let methods: [any ControlMethod.Type] = [
        Ping.self, Version.self, Status.self, Subscribe.self, Stats.self, Doctor.self,
        Sync.self, Resync.self, Pause.self, Resume.self, Reload.self,
        QueueChange.self, Pending.self, Retry.self, Discard.self, Conflicts.self, ResolveConflict.self,
        UpdateOrder.self, UpdateDevice.self, ReplyToTicket.self,
        CreateClient.self, CreateOrder.self, CreateDevice.self,
        ListOrders.self, GetOrder.self, ListDevices.self, ListClients.self, GetClient.self, ListTickets.self,
        GetTicket.self, DashboardStats.self,
        Backup.self, Purge.self,
    ]

    public static let notifications: [any ControlNotification.Type] = [StatusChanged.self, BackupChunk.self]

    /// The method with this name.
    public static func method(named name: String) -> (any ControlMethod.Type)? {
        methods.first { $0.name == name }
    }
}
