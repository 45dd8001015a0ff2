internal import Foundation
internal import RepairSyncModels

/// A position in one collection's changes feed: everything committed with a sequence number up to `sequence` has
/// been delivered. Sent to clients as opaque base64url text.
///
/// The epoch is bumped by the admin "expire cursors" action; a cursor from an older epoch, for another collection,
/// or that does not decode answers 410, as a production server's expired cursor would.
struct FeedCursor: Equatable {
    var collection: SyncCollection
    var epoch: Int64
    var sequence: Int64
    /// Distinguishes cursors for the same position (the `empty_feed` fault hands out a new one each time).
    var nonce: UInt64? = nil

    var encoded: String {
        Data("1|\(collection.name)|\(epoch)|\(sequence)\(nonce.map { "|\($0)" } ?? "")".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    init(collection: SyncCollection, epoch: Int64, sequence: Int64, nonce: UInt64? = nil) {
        self.collection = collection
        self.epoch = epoch
        self.sequence = sequence
        self.nonce = nonce
    }

    init?(encoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 200, let data = Data(base64Encoded: base64),
            let plain = String(data: data, encoding: .utf8)
        else { return nil }
        let parts = plain.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 5, parts[0] == "1",
            let collection = SyncCollection(rawValue: String(parts[1])),
            let epoch = Int64(parts[2]), let sequence = Int64(parts[3]), sequence >= 0
        else { return nil }
        self.init(collection: collection, epoch: epoch, sequence: sequence)
    }
}
