public import GRDB
public import RepairSyncModels

extension Client: ReplicaRecord {
    public static let upsertSQL = makeUpsertSQL()
    public static let columnNames = CodingKeys.allCases.map(\.stringValue)

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            id: try row.value(K.id), email: try row.value(K.email), firstName: try row.value(K.firstName),
            lastName: try row.value(K.lastName), phone: try row.value(K.phone), company: try row.value(K.company),
            address: try row.value(K.address), city: try row.value(K.city), postcode: try row.value(K.postcode),
            notes: try row.value(K.notes), orderCount: try row.value(K.orderCount),
            totalSpent: try row.value(K.totalSpent), createdAt: try row.value(K.createdAt),
            updatedAt: try row.value(K.updatedAt), version: try row.value(K.version))
    }

    public var databaseArguments: StatementArguments {
        [
            id, email, firstName, lastName, phone, company, address, city, postcode, notes, orderCount, totalSpent,
            createdAt, updatedAt, version,
        ]
    }
}
