public import GRDB
public import RepairSyncModels

extension TicketMessage: ReplicaRecord {
    public static let upsertSQL = makeUpsertSQL()
    public static let columnNames = CodingKeys.allCases.map(\.stringValue)

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            id: try row.value(K.id), ticketId: try row.value(K.ticketId), content: try row.value(K.content),
            senderType: try row.value(K.senderType), senderName: try row.value(K.senderName),
            senderId: try row.value(K.senderId), isInternal: try row.value(K.isInternal),
            createdAt: try row.value(K.createdAt), updatedAt: try row.value(K.updatedAt),
            version: try row.value(K.version))
    }

    public var databaseArguments: StatementArguments {
        [id, ticketId, content, senderType, senderName, senderId, isInternal, createdAt, updatedAt, version]
    }
}
