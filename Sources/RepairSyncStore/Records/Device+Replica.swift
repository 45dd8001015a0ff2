public import GRDB
public import RepairSyncModels

extension Device: ReplicaRecord {
    public static let upsertSQL = makeUpsertSQL()
    public static let columnNames = CodingKeys.allCases.map(\.stringValue)

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            id: try row.value(K.id), orderId: try row.value(K.orderId), type: try row.value(K.type),
            brand: try row.value(K.brand), model: try row.value(K.model), serial: try row.value(K.serial),
            imei: try row.value(K.imei), passcode: try row.value(K.passcode), status: try row.value(K.status),
            issue: try row.value(K.issue), diagnosis: try row.value(K.diagnosis),
            resolution: try row.value(K.resolution), price: try row.value(K.price),
            assignedUserId: try row.value(K.assignedUserId), createdAt: try row.value(K.createdAt),
            updatedAt: try row.value(K.updatedAt), version: try row.value(K.version))
    }

    public var databaseArguments: StatementArguments {
        [
            id, orderId, type, brand, model, serial, imei, passcode, status, issue, diagnosis, resolution, price,
            assignedUserId, createdAt, updatedAt, version,
        ]
    }
}
