public import GRDB
public import RepairSyncModels

extension Order: ReplicaRecord {
    public static let upsertSQL = makeUpsertSQL()
    public static let columnNames = CodingKeys.allCases.map(\.stringValue)

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            id: try row.value(K.id), orderNumber: try row.value(K.orderNumber), status: try row.value(K.status),
            total: try row.value(K.total), deposit: try row.value(K.deposit), balance: try row.value(K.balance),
            notes: try row.value(K.notes), clientId: try row.value(K.clientId),
            clientName: try row.value(K.clientName), clientEmail: try row.value(K.clientEmail),
            clientPhone: try row.value(K.clientPhone), locationId: try row.value(K.locationId),
            locationName: try row.value(K.locationName), assignedUserId: try row.value(K.assignedUserId),
            assignedUserName: try row.value(K.assignedUserName), deviceCount: try row.value(K.deviceCount),
            createdAt: try row.value(K.createdAt), updatedAt: try row.value(K.updatedAt),
            version: try row.value(K.version))
    }

    public var databaseArguments: StatementArguments {
        [
            id, orderNumber, status, total, deposit, balance, notes, clientId, clientName, clientEmail, clientPhone,
            locationId, locationName, assignedUserId, assignedUserName, deviceCount, createdAt, updatedAt, version,
        ]
    }
}
