internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// 4.8: the optional change stream. Opened before the writes, it must answer an event stream whose first event is
/// `ready`, keep a quiet connection alive with heartbeats, and announce the run's own writes; an unknown
/// `Last-Event-ID` gets a `reset`, and no token a 401. A server without the stream (404, 405, 501) leaves every
/// check not exercised: the stream is optional.
extension ConformanceRun {
    static let eventClauses = ["events-open", "events-heartbeat", "events-change", "events-reset", "events-auth"]
    /// The most a `heartbeat_ms` may be (4.8: at most 15 seconds).
    static let longestHeartbeat = 15_000

    /// Opens the stream and judges its opening and its heartbeat; returns it open, for `judgeAnnouncements`, or nil
    /// when the server has none or it did not open (the checks then say why).
    func openEvents() async -> (stream: EventStreamReader, mark: Int)? {
        let open = CheckID(clause: "events-open")
        let heartbeat = CheckID(clause: "events-heartbeat")
        let mark = client.recorder.count
        switch await EventStreamReader.open(
            http: eventsHTTP, baseURL: options.baseURL, token: options.token, lastEventID: nil,
            headTimeout: options.requestTimeout)
        {
        case .failed(let reason):
            findings.problem(open, "GET \(EventStreamReader.path) got no answer (\(reason))")
            skipEvents(except: open, "the stream did not open")
            return nil
        case .answered(let exchange):
            if let status = exchange.status, [404, 405, 501].contains(status) {
                for id in checks(of: Self.eventClauses) {
                    findings.notExercised(
                        id,
                        "the server has no change stream (GET \(EventStreamReader.path) answered \(status)); it is optional (4.8)"
                    )
                }
                return nil
            }
            let type = exchange.header("Content-Type") ?? "none"
            findings.problem(
                open,
                "GET \(EventStreamReader.path) \(exchange.answer) with Content-Type \(type), not 200 text/event-stream")
            skipEvents(except: open, "the stream did not open")
            return nil
        case .stream(let stream):
            let deadline = ContinuousClock.now.advanced(by: options.requestTimeout)
            let seen = await stream.wait(until: deadline) { !$0.events.isEmpty }
            let announced = judgeOpening(stream, seen.events.first, ended: seen.ended)
            guard let readyChunk = seen.chunks.first(where: { !$0.events.isEmpty }), let interval = announced else {
                findings.skip(heartbeat, "no ready event named the heartbeat interval")
                return (stream, mark)
            }
            if selected(heartbeat) { await judgeHeartbeat(stream, after: readyChunk.at, interval: interval) }
            return (stream, mark)
        }
    }

    private func skipEvents(except kept: CheckID, _ reason: String) {
        for id in checks(of: Self.eventClauses) where id != kept { findings.skip(id, reason) }
    }

    /// 200 `text/event-stream`, `Cache-Control: no-store`, and `ready` first with an id and `heartbeat_ms` ≤ 15000.
    /// Returns the heartbeat interval it announced.
    private func judgeOpening(
        _ stream: EventStreamReader, _ first: ServerSentEvent?, ended: String?
    ) -> Duration? {
        let check = CheckID(clause: "events-open")
        let path = "GET \(EventStreamReader.path)"
        let cache = stream.header("Cache-Control")?.lowercased() ?? ""
        guard cache.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "no-store" })
        else {
            findings.problem(check, "\(path) answered Cache-Control \(cache.isEmpty ? "none" : cache), not no-store")
            return first.flatMap { Self.heartbeat(in: $0) }
        }
        guard let first else {
            findings.problem(
                check, "\(path): no event within \(options.requestTimeout)" + (ended.map { " (\($0))" } ?? ""))
            return nil
        }
        guard first.type == "ready" else {
            findings.problem(check, "\(path): the first event is \(first.type), not ready")
            return nil
        }
        guard let interval = Self.heartbeat(in: first) else {
            findings.problem(
                check,
                "\(path): ready's data \(first.data.prefix(80)) names no heartbeat_ms in 1…\(Self.longestHeartbeat)")
            return nil
        }
        guard let id = first.id, UInt64(id) != nil else {
            findings.problem(
                check,
                "\(path): a fresh stream's ready has id \(first.id ?? "none"), not the newest change as a decimal integer"
            )
            return interval
        }
        findings.examined(check)
        findings.summary(
            check,
            "200 text/event-stream, Cache-Control no-store; ready first (id \(id), heartbeat_ms \(interval.wholeMilliseconds))"
        )
        return interval
    }

    /// `heartbeat_ms` of a `ready` event when it is within 1…15000.
    static func heartbeat(in event: ServerSentEvent) -> Duration? {
        guard event.type == "ready",
            let milliseconds = (try? JSONText.parse(Data(event.data.utf8)))?["heartbeat_ms"]?.intValue,
            (1...longestHeartbeat).contains(milliseconds)
        else { return nil }
        return .milliseconds(milliseconds)
    }

    /// 4.8: nothing sent for `interval` → a heartbeat. On a stream that just opened, nothing may be silent for longer
    /// than the interval (with slack for the network and a loaded server) over two intervals: the gaps are judged,
    /// not the first bytes — a padding comment or a `retry:` line right after `ready`, then nothing, is no heartbeat.
    private func judgeHeartbeat(_ stream: EventStreamReader, after ready: ContinuousClock.Instant, interval: Duration)
        async
    {
        let id = CheckID(clause: "events-heartbeat")
        let slack = max(Duration.seconds(2), interval)
        let longest = interval + slack
        let deadline = ready.advanced(by: longest * 2)
        // Watched until bytes came two intervals after `ready` (each gap then judged), or until the deadline.
        let seen = await stream.wait(until: deadline) { received in
            guard let last = received.chunks.last(where: { $0.at > ready }) else { return false }
            return ready.duration(to: last.at) >= interval * 2
        }
        let arrivals = [ready] + seen.chunks.filter { $0.at > ready }.map(\.at)
        let watchedTwo = ready.duration(to: arrivals[arrivals.count - 1]) >= interval * 2
        let end = watchedTwo ? arrivals[arrivals.count - 1] : min(ContinuousClock.now, deadline)
        let gaps = zip(arrivals, arrivals.dropFirst() + [end]).map { $0.duration(to: $1) }
        let widest = gaps.max() ?? .zero
        if !watchedTwo, let ended = seen.ended {
            findings.problem(
                id,
                "the stream ended \(ready.duration(to: end).wholeMilliseconds) ms after ready, before two heartbeats (\(ended))"
            )
        } else if widest > longest {
            findings.problem(
                id,
                "nothing came for \(widest.wholeMilliseconds) ms at a stretch after ready, whose heartbeat_ms is \(interval.wholeMilliseconds)"
            )
        } else {
            findings.examined(id)
            findings.summary(
                id,
                "the quiet stream was never silent for more than \(widest.wholeMilliseconds) ms over \(ready.duration(to: end).wholeMilliseconds) ms (heartbeat_ms \(interval.wholeMilliseconds))"
            )
        }
    }

    /// 4.8: every collection the run wrote to since the stream opened was named by a `change` event, and the ids of
    /// `change` and `reset` events increase. Closes the stream.
    func judgeAnnouncements(_ stream: EventStreamReader, since mark: Int) async {
        defer { stream.close() }
        let check = CheckID(clause: "events-change")
        guard selected(check) else { return }
        let written = Self.collectionsWritten(client.recorder.exchanges(since: mark))
        guard !written.isEmpty else {
            findings.skip(
                check,
                options.dryRun ? "--dry-run: the run wrote nothing to announce" : "the run wrote nothing to announce")
            return
        }
        // The writes are committed: their announcements are due at once. The bound only stops a wait for one that
        // never comes.
        let deadline = ContinuousClock.now.advanced(by: max(.seconds(10), options.requestTimeout / 3))
        let seen = await stream.wait(until: deadline) { received in
            written.isSubset(of: EventStreamReader.announced(received.events))
        }
        let announced = EventStreamReader.announced(seen.events)
        let missing = written.subtracting(announced).map(\.name).sorted()
        var ids: [UInt64] = []
        for event in seen.events where ["change", "reset"].contains(event.type) {
            guard let text = event.id, let id = UInt64(text) else {
                findings.problem(check, "a \(event.type) event has id \(event.id ?? "none"), not a decimal integer")
                return
            }
            ids.append(id)
        }
        if let index = ids.indices.dropFirst().first(where: { ids[$0] <= ids[$0 - 1] }) {
            findings.problem(check, "event ids do not increase: \(ids[index - 1]) then \(ids[index])")
        } else if !missing.isEmpty {
            findings.problem(
                check,
                "no change event named \(missing.joined(separator: ", ")) within \(deadline - stream.opened) of opening, "
                    + "though the run wrote there" + (seen.ended.map { " (the stream: \($0))" } ?? ""))
        } else {
            findings.examined(check)
            findings.summary(
                check,
                "the run's writes to \(written.map(\.name).sorted().joined(separator: ", ")) were announced, "
                    + "in \(plural(ids.count, "event")) with increasing ids")
        }
    }

    /// The collections that answered writes wrote to: a PATCH's, a message's and its ticket's, a create's and its
    /// parent's (4.7).
    static func collectionsWritten(_ exchanges: [Exchange]) -> Set<SyncCollection> {
        var written: Set<SyncCollection> = []
        for exchange in exchanges where [200, 201].contains(exchange.status ?? 0) && exchange.method != "GET" {
            guard exchange.header("Idempotent-Replayed")?.lowercased() != "true" else { continue }
            let parts = exchange.path.split(separator: "?")[0].split(separator: "/").map(String.init)
            guard parts.count >= 3, let collection = SyncCollection(rawValue: parts[2]) else { continue }
            switch (exchange.method, parts.count, exchange.status) {
            case ("PATCH", 4, _):
                written.insert(collection)
            case ("POST", 5, 201):
                written.formUnion([.ticketMessages, .tickets])
            case ("POST", 3, 201):
                written.insert(collection)
                if collection == .orders { written.insert(.clients) }
                if collection == .devices { written.insert(.orders) }
            default:
                break
            }
        }
        return written
    }

    /// 4.8: an unknown `Last-Event-ID` → `ready` without an id, then `reset` with one; no token → 401.
    func probeEventsRefusals() async {
        let reset = CheckID(clause: "events-reset")
        if selected(reset) {
            let unknown = "repair-api-conformance-\(runID)"
            switch await EventStreamReader.open(
                http: eventsHTTP, baseURL: options.baseURL, token: options.token, lastEventID: unknown,
                headTimeout: options.requestTimeout)
            {
            case .stream(let stream):
                let seen = await stream.wait(until: ContinuousClock.now.advanced(by: options.requestTimeout)) {
                    $0.events.count >= 2
                }
                stream.close()
                let events = seen.events
                let said = "GET \(EventStreamReader.path) with Last-Event-ID \(unknown)"
                if events.count < 2 {
                    findings.problem(
                        reset,
                        "\(said): \(plural(events.count, "event")) within \(options.requestTimeout), not ready then reset"
                    )
                } else if events[0].type != "ready" || events[0].id != nil {
                    findings.problem(
                        reset,
                        "\(said): the first event is \(events[0].type) with id \(events[0].id ?? "none"), not ready without an id"
                    )
                } else if events[1].type != "reset" || events[1].id.flatMap({ UInt64($0) }) == nil {
                    findings.problem(
                        reset,
                        "\(said): after ready came \(events[1].type) with id \(events[1].id ?? "none"), not reset with the newest id"
                    )
                } else {
                    findings.examined(reset)
                    findings.summary(
                        reset, "an unknown Last-Event-ID got ready without an id, then reset (id \(events[1].id ?? ""))"
                    )
                }
            case .answered(let exchange):
                findings.problem(reset, "GET \(exchange.path) \(exchange.answer), not 200 with ready then reset")
            case .failed(let reason):
                findings.problem(
                    reset, "GET \(EventStreamReader.path) with an unknown Last-Event-ID got no answer (\(reason))")
            }
        }
        let auth = CheckID(clause: "events-auth")
        if selected(auth) {
            switch await EventStreamReader.open(
                http: eventsHTTP, baseURL: options.baseURL, token: nil, lastEventID: nil,
                headTimeout: options.requestTimeout)
            {
            case .stream(let stream):
                stream.close()
                findings.problem(auth, "GET \(EventStreamReader.path) without a token opened the stream, not 401")
            case .answered(let exchange):
                if exchange.status == 401, exchange.errorCode == "unauthorized" {
                    findings.examined(auth)
                    findings.summary(auth, "401 unauthorized without a token")
                } else {
                    findings.problem(
                        auth, "GET \(EventStreamReader.path) without a token \(exchange.answer), not 401 unauthorized")
                }
            case .failed(let reason):
                findings.problem(auth, "GET \(EventStreamReader.path) without a token got no answer (\(reason))")
            }
        }
    }
}

extension Duration {
    fileprivate var wholeMilliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
