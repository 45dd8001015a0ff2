public import ArgumentParser
public import RepairSyncProtocol

// The catalogue's enums as command-line values: parsed, listed in --help and completed from the same cases the
// daemon decodes.
extension ChangeKind: ExpressibleByArgument {}
extension SyncCollection: ExpressibleByArgument {}
extension ConflictChoice.Side: ExpressibleByArgument {}
extension RPC.DashboardStats.Period: ExpressibleByArgument {}
