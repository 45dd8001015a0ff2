public import GRDB
public import RepairSyncModels

// How the model's value types are stored. See ReplicaMigrations for why each representation was chosen.

extension Money: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { canonicalText.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Money? {
        switch dbValue.storage {
        case .string(let text): Money(exactly: text)
        // An integer written by a local tool into a STRICT TEXT column arrives as text; this is for views.
        case .int64(let value): Money(exactly: String(value))
        default: nil
        }
    }
}

extension Timestamp: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { rfc3339.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Timestamp? {
        guard case .string(let text) = dbValue.storage else { return nil }
        return Timestamp(rfc3339: text)
    }
}

extension OrderStatus: DatabaseValueConvertible {}
extension DeviceStatus: DatabaseValueConvertible {}
extension TicketStatus: DatabaseValueConvertible {}
extension SenderType: DatabaseValueConvertible {}
extension SyncCollection: DatabaseValueConvertible {}
extension SyncMetadata.State: DatabaseValueConvertible {}
