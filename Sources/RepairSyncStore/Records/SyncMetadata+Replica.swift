public import GRDB
public import RepairSyncModels

extension SyncMetadata: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "sync_metadata"

    public init(row: Row) throws {
        typealias K = CodingKeys
        self.init(
            collection: try row.value(K.collection), cursor: try row.value(K.cursor),
            lastSyncedAt: try row.value(K.lastSyncedAt), lastSuccessAt: try row.value(K.lastSuccessAt),
            state: try row.value(K.state), lastError: try row.value(K.lastError))
    }

    public func encode(to container: inout PersistenceContainer) throws {
        typealias K = CodingKeys
        container[K.collection.stringValue] = collection
        container[K.cursor.stringValue] = cursor
        container[K.lastSyncedAt.stringValue] = lastSyncedAt
        container[K.lastSuccessAt.stringValue] = lastSuccessAt
        container[K.state.stringValue] = state
        container[K.lastError.stringValue] = lastError
    }
}
