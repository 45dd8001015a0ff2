internal import GRDB

extension Row {
    /// The value of the column named like a record's JSON key; throws (instead of trapping) when a local program
    /// has written something that does not decode.
    func value<Value: DatabaseValueConvertible>(_ key: some CodingKey) throws -> Value {
        try decode(forColumn: key.stringValue)
    }
}
