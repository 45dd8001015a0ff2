public import GRDB
public import RepairSyncModels

extension Ticket: ReplicaRecord {
    public static let upsertSQL = makeUpsertSQL()
    public static let columnNames = CodingKeys.allCases.map(\.stringValue)

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            id: try row.value(K.id), ticketNumber: try row.value(K.ticketNumber), subject: try row.value(K.subject),
            status: try row.value(K.status), priority: try row.value(K.priority),
            clientId: try row.value(K.clientId), clientEmail: try row.value(K.clientEmail),
            clientName: try row.value(K.clientName), assignedUserId: try row.value(K.assignedUserId),
            assignedUserName: try row.value(K.assignedUserName), orderId: try row.value(K.orderId),
            orderRef: try row.value(K.orderRef), messageCount: try row.value(K.messageCount),
            lastMessageAt: try row.value(K.lastMessageAt), createdAt: try row.value(K.createdAt),
            updatedAt: try row.value(K.updatedAt), version: try row.value(K.version))
    }

    public var databaseArguments: StatementArguments {
        [
            id, ticketNumber, subject, status, priority, clientId, clientEmail, clientName, assignedUserId,
            assignedUserName, orderId, orderRef, messageCount, lastMessageAt, createdAt, updatedAt, version,
        ]
    }
}
