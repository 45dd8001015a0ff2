internal import Foundation
internal import GRDB
internal import RepairSyncModels
internal import Synchronization

/// Changes pages that break the contract on purpose (fault injection): a feed that does not advance, one that
/// hands out empty pages forever, a stale cached page, a record that does not decode.
extension BackendStore {
    func rememberFirstPage(_ collection: SyncCollection, _ body: Data) {
        firstPages.withLock { pages in
            if pages[collection] == nil { pages[collection] = body }
        }
    }

    /// The damaged answer to a changes request when `fault` is a feed fault; nil otherwise (serve it normally).
    func damagedChangesPage(_ collection: SyncCollection, cursor: String?, limit: Int, fault: FaultKind?) async throws
        -> BackendReply?
    {
        switch fault {
        case .stuckFeed?:
            let real = try await changesPage(collection, cursor: cursor, limit: limit)
            guard real.status == 200, var page = JSONValue.object(from: real.body) else { return real }
            let epoch = try await pool.read { db in try self.cursorEpoch(db) }
            page["has_more"] = .bool(true)
            page["next_cursor"] = .string(
                cursor ?? FeedCursor(collection: collection, epoch: epoch, sequence: 0).encoded)
            return BackendReply(status: 200, body: try BackendJSON.encoder().encode(JSONValue.object(page)))
        case .rotatingFeed?:
            let real = try await changesPage(collection, cursor: cursor, limit: limit)
            guard real.status == 200, var page = JSONValue.object(from: real.body) else { return real }
            let epoch = try await pool.read { db in try self.cursorEpoch(db) }
            let position = cursor.flatMap(FeedCursor.init(encoded:))?.sequence ?? 0
            page["has_more"] = .bool(true)
            page["next_cursor"] = .string(
                FeedCursor(
                    collection: collection, epoch: epoch, sequence: position, nonce: UInt64.random(in: 1...UInt64.max)
                ).encoded)
            return BackendReply(status: 200, body: try BackendJSON.encoder().encode(JSONValue.object(page)))
        case .emptyFeed?:
            let epoch = try await pool.read { db in try self.cursorEpoch(db) }
            let position = cursor.flatMap(FeedCursor.init(encoded:))?.sequence ?? 0
            let next = FeedCursor(
                collection: collection, epoch: epoch, sequence: position, nonce: UInt64.random(in: 1...UInt64.max))
            let body = #"{"data":[],"deleted":[],"next_cursor":"\#(next.encoded)","has_more":true}"#
            return BackendReply(status: 200, body: Data(body.utf8))
        case .stalePage?:
            guard let first = firstPages.withLock({ $0[collection] }) else { return nil }
            return BackendReply(status: 200, body: first)
        case .malformedRecord?:
            let real = try await changesPage(collection, cursor: cursor, limit: limit)
            guard real.status == 200, let text = String(data: real.body, encoding: .utf8),
                let range = text.range(of: #""version":[0-9]+"#, options: .regularExpression)
            else { return real }
            return BackendReply(
                status: 200, body: Data(text.replacingCharacters(in: range, with: #""version":"x""#).utf8))
        default:
            return nil
        }
    }
}
