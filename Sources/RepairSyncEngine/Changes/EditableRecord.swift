internal import GRDB
public import RepairSyncModels
public import RepairSyncStore

/// A record type a local change can edit (orders and devices) and the fields it may change, as the API allows.
public protocol EditableRecord: ReplicaRecord {
    /// The fields `PATCH` accepts for this collection.
    static var editableFields: [String] { get }
    /// The current values of `editableFields`.
    var editableValues: FieldValues { get }
    /// Sets the fields present in `values`.
    mutating func apply(_ values: FieldValues)
    /// This record as it may be stored: secrets sealed with `cipher`, or dropped without one.
    func protectingSecrets(_ cipher: PasscodeCipher?) -> Self
}

extension EditableRecord {
    public func protectingSecrets(_ cipher: PasscodeCipher?) -> Self { self }

    /// The stored row's `editableValues` (the columns are named like the fields, and hold the same text), read
    /// through a cached statement without decoding the whole record; nil when there is no such row.
    static func storedEditableValues(id: String, _ db: Database) throws -> FieldValues? {
        let sql = "SELECT \(editableFields.joined(separator: ", ")) FROM \(databaseTableName) WHERE id = ?"
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [id]) else { return nil }
        var values: FieldValues = [:]
        // By position (the statement selects `editableFields` in order): a lookup by name compares lowercased names.
        for (index, field) in editableFields.enumerated() { values[field] = .some(row[index] as String?) }
        return values
    }
}

extension Order: EditableRecord {
    public static let editableFields = ["status", "notes"]

    public var editableValues: FieldValues { ["status": status.rawValue, "notes": notes] }

    public mutating func apply(_ values: FieldValues) {
        if let status = values["status"], let raw = status { self.status = .parse(raw) }
        if let notes = values["notes"] { self.notes = notes }
    }
}

extension Device: EditableRecord {
    /// The passcode is sealed, or not kept at all without a key.
    public func protectingSecrets(_ cipher: PasscodeCipher?) -> Device {
        var stored = self
        stored.passcode = cipher?.seal(passcode)
        return stored
    }

    public static let editableFields = ["status", "diagnosis", "resolution"]

    public var editableValues: FieldValues {
        ["status": status.rawValue, "diagnosis": diagnosis, "resolution": resolution]
    }

    public mutating func apply(_ values: FieldValues) {
        if let status = values["status"], let raw = status { self.status = .parse(raw) }
        if let diagnosis = values["diagnosis"] { self.diagnosis = diagnosis }
        if let resolution = values["resolution"] { self.resolution = resolution }
    }
}
