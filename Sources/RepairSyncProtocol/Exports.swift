// The records (orders, devices, clients, tickets, messages), money and timestamps are part of the protocol's
// vocabulary — results carry records in the API's shapes — so a client that imports the protocol has them too.
@_exported public import RepairSyncModels
