internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The changes feeds (4.2), single records (4.3) and tombstones (3.6).
extension ConformanceRun {
    /// Reads the feed twice (different limits), then re-sends a cursor from the middle and the last one, and GETs a
    /// few of its records.
    func checkFeed(_ collection: SyncCollection) async {
        let first = await readFeed(collection, limit: options.pageLimit, inspecting: true)
        reads[collection] = first
        if let final = first.finalCursor { tails[collection] = final }

        let reread = CheckID(clause: "feed-reread", collection: collection)
        var pages = plural(first.pages, "page") + " of limit \(first.limit)"
        if selected(reread) {
            if first.complete {
                let second = await readFeed(collection, limit: options.secondPageLimit, inspecting: false)
                compare(first, second, reread)
                pages += " and " + plural(second.pages, "page") + " of limit \(second.limit)"
            } else {
                findings.skip(reread, "the first read did not reach the end of the feed")
            }
        }
        let limitCheck = CheckID(clause: "feed-limit", collection: collection)
        if selected(limitCheck), first.fullestPage < first.limit, first.entries > 1 {
            // No page of the read came near its limit (a small tenant): the limit is tried where it must bite.
            await checkSmallLimit(collection, limitCheck)
            pages += " and a page of limit 1"
        }
        findings.summary(limitCheck, "\(pages), none over its limit")
        findings.summary(
            CheckID(clause: "feed-unique", collection: collection),
            "\(pages): no id twice in a page, no record version twice in a read")
        let cursor = CheckID(clause: "feed-cursor", collection: collection)
        if selected(cursor) {
            if first.complete {
                await checkCursorReuse(first, cursor)
            } else {
                findings.skip(cursor, "the first read did not reach the end of the feed")
            }
        }
        if wants("record-get", collection) { await checkRecordGet(first) }
        if wants("tombstones"), let id = first.tombstones.keys.min() {
            // 4.3: a deleted record answers 404.
            let check = CheckID(clause: "tombstones")
            let (exchange, _) = await client.call { api throws(APIError) in _ = try await api.record(collection, id: id)
            }
            if exchange.status == 404, exchange.errorCode == "not_found" {
                findings.examined(check)
            } else {
                findings.problem(
                    check, "\(exchange.requestLine) of a tombstoned record \(exchange.answer), not 404 not_found")
            }
        }
    }

    /// The feed's first page with `limit=1`, on a feed holding more than one entry: it must hold one.
    func checkSmallLimit(_ collection: SyncCollection, _ check: CheckID) async {
        let (exchange, _) = await client.call { api throws(APIError) in
            _ = try await api.changes(collection, cursor: nil, limit: 1)
        }
        guard exchange.status == 200, let page = try? JSONText.parse(exchange.body),
            let data = page["data"]?.elements, let deleted = page["deleted"]?.elements
        else {
            findings.problem(check, "\(exchange.requestLine) \(exchange.answer)")
            return
        }
        if data.count + deleted.count > 1 {
            findings.problem(check, "\(exchange.requestLine) answered \(data.count + deleted.count) entries")
        } else {
            findings.examined(check)
        }
    }

    /// Pages through the feed from its start until `has_more` is false, holding every page to 4.2. With
    /// `inspecting`, every record and tombstone is also held to the record clauses. A 410 on the way (a cursor the
    /// server expired) restarts the read from the start, at most twice.
    func readFeed(_ collection: SyncCollection, limit: Int, inspecting: Bool) async -> FeedRead {
        let paging = CheckID(clause: "feed-paging", collection: collection)
        let limitCheck = CheckID(clause: "feed-limit", collection: collection)
        let unique = CheckID(clause: "feed-unique", collection: collection)
        var read = FeedRead(collection: collection, limit: limit)
        var cursor: String?
        var delivered: Set<String> = []
        var ordered: Set<String> = []
        var sent: [String: Int] = [:]
        var restarts = 0
        while true {
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.changes(collection, cursor: cursor, limit: limit)
            }
            let origin = exchange.requestLine
            if exchange.status == 410, cursor != nil, restarts < 2 {
                restarts += 1
                expiredCursors.append((collection, exchange, false))
                read = FeedRead(collection: collection, limit: limit)
                (cursor, delivered, ordered, sent) = (nil, [], [], [:])
                continue
            }
            guard exchange.status == 200 else {
                findings.problem(paging, "\(origin) \(exchange.answer)")
                return read
            }
            if let problem = DaemonDecoding.pageProblem(collection, exchange.body) {
                findings.problem(paging, "the daemon cannot decode \(origin): \(problem)")
            }
            let page: JSONValue
            do {
                page = try JSONText.parse(exchange.body)
            } catch {
                findings.problem(paging, "\(origin) answered 200 with invalid JSON: \(error)")
                return read
            }
            guard let data = page["data"]?.elements, let deleted = page["deleted"]?.elements,
                let hasMore = page["has_more"]?.boolValue, let next = page["next_cursor"]?.stringValue, !next.isEmpty
            else {
                findings.problem(
                    paging, "\(origin): a page needs data and deleted arrays, has_more and a non-empty next_cursor")
                return read
            }
            read.pages += 1
            let entries = data.count + deleted.count
            read.fullestPage = max(read.fullestPage, entries)
            read.entries += entries
            if entries > limit {
                findings.problem(limitCheck, "\(origin) answered \(entries) entries")
            } else {
                findings.examined(limitCheck)
            }
            var pageIDs: Set<String> = []
            var answer: [String] = []
            var repeated: [String] = []
            for record in data {
                if inspecting { inspector.inspect(record, of: collection, origin: origin) }
                guard let id = record["id"]?.stringValue, let version = record["version"]?.intValue else { continue }
                if !pageIDs.insert(id).inserted { repeated.append("\(id) twice in one page") }
                let entry = "\(id)@\(version)"
                if !delivered.insert(entry).inserted { repeated.append("\(id) version \(version) again") }
                if ordered.insert(id).inserted { read.order.append(id) }
                read.versions[id] = max(version, read.versions[id] ?? 0)
                read.tombstones[id] = nil
                read.lastDelivered = id
                answer.append(entry)
            }
            for tombstone in deleted {
                if inspecting, let problem = inspector.inspectTombstone(tombstone, of: collection, origin: origin) {
                    findings.problem(CheckID(clause: "tombstones"), problem)
                    continue
                }
                guard let id = tombstone["id"]?.stringValue else { continue }
                if inspecting { findings.examined(CheckID(clause: "tombstones")) }
                if !pageIDs.insert(id).inserted { repeated.append("\(id) twice in one page") }
                read.tombstones[id] = tombstone["deleted_at"]?.stringValue ?? ""
                read.versions[id] = nil
                if read.lastDelivered == id { read.lastDelivered = nil }
                answer.append("\(id)@deleted")
            }
            if repeated.isEmpty {
                findings.examined(unique)
            } else {
                findings.problem(
                    unique,
                    "\(origin) delivered \(repeated.prefix(3).joined(separator: ", "))"
                        + (repeated.count > 3 ? " (\(repeated.count) such entries in the page)" : ""))
            }
            read.answers[cursor ?? ""] = answer
            if !hasMore {
                read.finalCursor = next
                if restarts > 0 { markRecovered(collection) }
                findings.examined(paging)
                if limit == options.pageLimit {
                    findings.summary(
                        paging,
                        "\(plural(read.versions.count, "record")) and \(plural(read.tombstones.count, "tombstone")) in "
                            + "\(plural(read.pages, "page")) of limit \(limit), every page decoded")
                }
                return read
            }
            if entries == 0 && next == cursor {
                findings.problem(
                    paging, "\(origin): has_more true, an empty page and the same cursor: a client would ask forever")
                return read
            }
            if sent[next, default: 0] >= 2 {
                findings.problem(
                    paging, "\(origin): the feed does not advance (next_cursor \(next) sent back a third time)")
                return read
            }
            if read.pages >= options.maxPages {
                findings.problem(paging, "no end after \(read.pages) pages of limit \(limit)")
                return read
            }
            sent[next, default: 0] += 1
            read.cursors.append(next)
            cursor = next
        }
    }

    private func markRecovered(_ collection: SyncCollection) {
        for index in expiredCursors.indices where expiredCursors[index].collection == collection {
            expiredCursors[index].recovered = true
        }
    }

    /// 4.2: the same records, at the same versions, through other page boundaries. (On a tenant nobody writes to
    /// during the run; a record changed in between would show a newer version, which is accepted.)
    private func compare(_ first: FeedRead, _ second: FeedRead, _ id: CheckID) {
        guard second.complete else {
            findings.skip(id, "the second read (limit \(second.limit)) did not reach the end of the feed")
            return
        }
        let label = "read 1 (limit \(first.limit)) and read 2 (limit \(second.limit)) differ"
        let missing = first.versions.keys.filter { second.versions[$0] == nil && second.tombstones[$0] == nil }.sorted()
        let extra = second.versions.keys.filter { first.versions[$0] == nil }.sorted()
        let older = first.versions.compactMap { id, version in
            second.versions[id].flatMap { $0 < version ? "\(id) at \($0), was \(version)" : nil }
        }.sorted()
        let lostTombstones = first.tombstones.keys.filter { second.tombstones[$0] == nil && second.versions[$0] == nil }
        let newTombstones = second.tombstones.keys.filter { first.tombstones[$0] == nil && first.versions[$0] == nil }
        func few(_ ids: [String]) -> String { ids.prefix(4).joined(separator: ", ") + (ids.count > 4 ? ", …" : "") }
        var differences: [String] = []
        if !missing.isEmpty { differences.append("\(missing.count) records missing from read 2 (\(few(missing)))") }
        if !extra.isEmpty { differences.append("\(extra.count) records only in read 2 (\(few(extra)))") }
        if !older.isEmpty { differences.append("\(older.count) records older in read 2 (\(few(older)))") }
        if !lostTombstones.isEmpty { differences.append("\(lostTombstones.count) tombstones missing from read 2") }
        if !newTombstones.isEmpty { differences.append("\(newTombstones.count) tombstones only in read 2") }
        if differences.isEmpty {
            findings.examined(id)
            findings.summary(
                id,
                "limit \(first.limit) and limit \(second.limit) gave the same \(plural(first.versions.count, "record")) and "
                    + plural(first.tombstones.count, "tombstone"))
        } else {
            findings.problem(id, "\(label): " + differences.joined(separator: "; "))
        }
    }

    /// 4.2: a cursor is not used up by being sent: one from the middle answers its entries again, and the last one
    /// answers nothing already delivered (crash recovery sends the page in flight again).
    private func checkCursorReuse(_ read: FeedRead, _ id: CheckID) async {
        let collection = read.collection
        var said: [String] = []
        if !read.cursors.isEmpty {
            let middle = read.cursors[read.cursors.count / 2]
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.changes(collection, cursor: middle, limit: read.limit)
            }
            if exchange.status == 410 {
                // The contract lets a server expire cursors; that is judged by feed-expired, not held against reuse.
                expiredCursors.append((collection, exchange, true))
                findings.notExercised(id, "the server expired the cursor (410) before it could be sent again")
                return
            }
            if exchange.status == 200, let page = try? JSONText.parse(exchange.body) {
                let again = entries(of: page)
                if again == read.answers[middle] {
                    findings.examined(id)
                    said.append("a cursor from the middle answered the same \(again.count) entries again")
                } else {
                    findings.problem(
                        id,
                        "\(exchange.requestLine) sent again answered \(again.count) entries that differ from the first time's \(read.answers[middle]?.count ?? 0)"
                    )
                }
            } else {
                findings.problem(id, "\(exchange.requestLine) sent again \(exchange.answer)")
            }
        }
        guard let final = read.finalCursor else { return }
        var cursor = final
        for _ in 0..<50 {
            let (exchange, _) = await client.call { [cursor] api throws(APIError) in
                _ = try await api.changes(collection, cursor: cursor, limit: read.limit)
            }
            if exchange.status == 410 {
                expiredCursors.append((collection, exchange, true))
                findings.notExercised(id, "the server expired the cursor (410) before it could be sent again")
                return
            }
            guard exchange.status == 200, let page = try? JSONText.parse(exchange.body),
                let next = page["next_cursor"]?.stringValue, let hasMore = page["has_more"]?.boolValue
            else {
                findings.problem(id, "the last cursor, sent again: \(exchange.requestLine) \(exchange.answer)")
                return
            }
            let stale = entries(of: page).filter { entry in
                let parts = entry.split(separator: "@")
                let entryID = String(parts[0])
                if parts[1] == "deleted" { return read.tombstones[entryID] != nil }
                return Int(parts[1]).map { $0 <= (read.versions[entryID] ?? 0) } ?? false
            }
            if !stale.isEmpty {
                findings.problem(
                    id,
                    "\(exchange.requestLine) (the last cursor) answered entries already delivered: \(stale.prefix(3).joined(separator: ", "))"
                )
                return
            }
            cursor = next
            if !hasMore {
                tails[collection] = next
                findings.examined(id)
                said.append("the last cursor answered nothing already delivered")
                findings.summary(id, said.joined(separator: "; "))
                return
            }
        }
        findings.problem(id, "the last cursor led to 50 pages with has_more true on a feed read to its end")
    }

    /// `id@version` / `id@deleted` of a page, in order.
    func entries(of page: JSONValue) -> [String] {
        let data = (page["data"]?.elements ?? []).compactMap { record -> String? in
            guard let id = record["id"]?.stringValue, let version = record["version"]?.intValue else { return nil }
            return "\(id)@\(version)"
        }
        let deleted = (page["deleted"]?.elements ?? []).compactMap { $0["id"]?.stringValue.map { "\($0)@deleted" } }
        return data + deleted
    }

    /// 4.3: the first and last record of the read answer 200 with the version the feed gave (or newer); an id the
    /// server never issued answers 404 `not_found`.
    private func checkRecordGet(_ read: FeedRead) async {
        let collection = read.collection
        let id = CheckID(clause: "record-get", collection: collection)
        let sample = [read.order.first, read.order.last].compactMap { $0 }.filter { read.versions[$0] != nil }
        for recordID in Set(sample).sorted() {
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.record(collection, id: recordID)
            }
            guard exchange.status == 200, let record = try? JSONText.parse(exchange.body) else {
                findings.problem(id, "\(exchange.requestLine) \(exchange.answer), but the feed holds \(recordID)")
                continue
            }
            inspector.inspect(record, of: collection, origin: exchange.requestLine)
            if let problem = DaemonDecoding.recordProblem(collection, exchange.body) {
                findings.problem(id, "the daemon cannot decode \(exchange.requestLine): \(problem)")
                continue
            }
            let version = record["version"]?.intValue ?? 0
            let fed = read.versions[recordID] ?? 0
            guard record["id"]?.stringValue == recordID, version >= fed else {
                findings.problem(
                    id,
                    "\(exchange.requestLine) answered \(record["id"]?.brief ?? "no id") at version \(version); the feed gave version \(fed)"
                )
                continue
            }
            findings.examined(id)
        }
        let unknown = "repair-api-conformance-no-such-record-\(runID)"
        let (exchange, _) = await client.call { api throws(APIError) in
            _ = try await api.record(collection, id: unknown)
        }
        if exchange.status == 404, exchange.errorCode == "not_found" {
            findings.examined(id)
        } else {
            findings.problem(id, "\(exchange.requestLine) \(exchange.answer), not 404 not_found")
        }
        findings.summary(
            id,
            sample.isEmpty
                ? "404 not_found for an unknown id (the feed has no record to GET)"
                : "\(Set(sample).count) records as the feed has them; 404 not_found for an unknown id")
    }

    /// A read of the whole feed for what the write checks need (a record to write to, the end of the feed) when the
    /// feed checks did not run.
    func readToEnd(_ collection: SyncCollection) async -> FeedRead? {
        let read = await readFeed(collection, limit: options.secondPageLimit, inspecting: false)
        guard let final = read.finalCursor else { return nil }
        tails[collection] = final
        return read
    }

    /// Pages from the latest known end of the feed (or its start) to `has_more: false` and returns that cursor: the
    /// cursor that precedes anything written next. Nil when the feed cannot be read to its end.
    func tailCursor(_ collection: SyncCollection) async -> String? {
        var cursor = tails[collection]
        for _ in 0..<max(options.maxPages, 1) {
            let (exchange, _) = await client.call { [cursor] api throws(APIError) in
                _ = try await api.changes(collection, cursor: cursor, limit: 1000)
            }
            if exchange.status == 410, cursor != nil {
                expiredCursors.append((collection, exchange, true))
                cursor = nil
                continue
            }
            guard exchange.status == 200, let page = try? JSONText.parse(exchange.body),
                let next = page["next_cursor"]?.stringValue, let hasMore = page["has_more"]?.boolValue
            else { return nil }
            cursor = next
            if !hasMore {
                tails[collection] = next
                return next
            }
        }
        return nil
    }

    /// Every data entry after `cursor`, to the end of the feed, in order (nil when the feed cannot be read).
    func records(after cursor: String, in collection: SyncCollection) async -> [JSONValue]? {
        var cursor = cursor
        var records: [JSONValue] = []
        for _ in 0..<1000 {
            let (exchange, _) = await client.call { [cursor] api throws(APIError) in
                _ = try await api.changes(collection, cursor: cursor, limit: 1000)
            }
            guard exchange.status == 200, let page = try? JSONText.parse(exchange.body),
                let next = page["next_cursor"]?.stringValue, let hasMore = page["has_more"]?.boolValue
            else { return nil }
            records += page["data"]?.elements ?? []
            cursor = next
            if !hasMore {
                tails[collection] = next
                return records
            }
        }
        return nil
    }
}
