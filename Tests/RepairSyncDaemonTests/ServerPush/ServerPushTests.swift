import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncProtocol
import Testing

/// Issue 22, item 1: the server's change stream (docs/api.md section 4.8) as the daemon uses it — the scheduler,
/// the engine and the stream client over a real store and a real repair-api-dev on loopback, the periodic interval
/// set to hours so that only the stream can bring an edit in.
@Suite("Server push", .timeLimit(.minutes(3)))
struct ServerPushTests {
    @Test("an edit on the server reaches the replica without any periodic run, within seconds")
    func editArrivesThroughTheStream() async throws {
        try await PushStack.with { stack in
            try await stack.settled()
            let periodicAt = try #require(stack.scheduler.snapshot.nextRunAt)
            let runsBefore = await stack.engine.status.metrics.runs
            try await stack.serverEdit("ord_3", notes: "ready for pickup (pushed)")
            let took = try await PushStack.waitUntil("the edit in the replica", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_3") == "ready for pickup (pushed)"
            }
            // The run that brought it ends; nothing else is planned but the periodic run.
            try await stack.settled()
            let runs = await stack.engine.status.metrics.runs - runsBefore
            #expect(runs >= 1 && runs <= 2, "runs for one edit: \(runs)")
            // The periodic run is still hours away: it was not what brought the edit.
            #expect(stack.scheduler.snapshot.nextRunReason == "periodic")
            // (Shown on the wall clock, converted from the monotonic plan at each look: equal within a second.)
            #expect(try #require(stack.scheduler.snapshot.nextRunAt) >= periodicAt.addingTimeInterval(-1))
            #expect(periodicAt.timeIntervalSinceNow > 3600)
            #expect(took < .seconds(30))
            let status = await stack.status()
            #expect(status.events == "connected")
            #expect(status.eventsSince != nil)
        }
    }

    @Test("a burst of 200 server edits makes a handful of pulls, not 200")
    func burstIsCoalesced() async throws {
        try await PushStack.with(orders: 50) { stack in
            try await stack.settled()
            let runsBefore = await stack.engine.status.metrics.runs
            let pagesBefore = try await stack.pagesServed("orders")
            let burstStart = ContinuousClock.now
            for index in 0..<200 {
                try await stack.serverEdit("ord_\(index % 50 + 1)", notes: "burst \(index)")
            }
            let burst = ContinuousClock.now - burstStart
            try await PushStack.waitUntil("the burst's last edit in the replica", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_50") == "burst 199"
            }
            try await stack.settled()
            // Every edit of the burst arrived.
            for id in 1...50 {
                let last = (0..<200).last { $0 % 50 + 1 == id }!
                #expect(try stack.replicaNotes("ord_\(id)") == "burst \(last)")
            }
            let runs = await stack.engine.status.metrics.runs - runsBefore
            let pages = try await stack.pagesServed("orders") - pagesBefore
            // The debounce (100 ms, at most 500 ms after the first) and the single run in flight coalesce the
            // burst: at most a run per half second of burst (plus the one after it), however many edits it holds —
            // on a loaded machine the 200 edits themselves take longer, never the runs more per edit.
            let bound = Int((burst / .milliseconds(500)).rounded(.up)) + 2
            #expect(runs >= 1 && runs <= bound, "pull runs for 200 edits over \(burst): \(runs), bound \(bound)")
            #expect(runs <= 40, "pull runs for 200 edits: \(runs): one per \(200 / max(runs, 1)) edits")
            #expect(pages <= 2 * bound, "changes pages for 200 edits: \(pages)")
            print("burst of 200 server edits over \(burst): \(runs) runs, \(pages) orders pages")
        }
    }

    @Test(
        "a server without the stream (404): status says unavailable, the periodic schedule carries on, one attempt only"
    )
    func missingStreamFallsBackToPeriodic() async throws {
        try await PushStack.with(interval: .seconds(2)) { backend in
            _ = try await backend.send(.PUT, "/admin/events", json: #"{"mode": "off"}"#)
        } _: { stack in
            try await PushStack.waitUntil("events unavailable") { stack.events.snapshot.state == .unavailable }
            let status = await stack.status()
            #expect(status.events == "unavailable")
            // The edit arrives with a periodic run (every 2 s here).
            try await stack.serverEdit("ord_4", notes: "found by the periodic run")
            try await PushStack.waitUntil("the periodic run brought the edit", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_4") == "found by the periodic run"
            }
            // Not retried before the recheck interval (an hour here, 30 min by default): no hammering.
            #expect(stack.events.snapshot.attempts == 1)
            let served = try await stack.serverEvents()
            #expect(served["requests"] as? Int == 1)
        }
    }

    @Test("a dropped stream reconnects with Last-Event-ID and the edit made while it was down still arrives")
    func dropResumes() async throws {
        try await PushStack.with { stack in
            try await stack.settled()
            let connections = stack.events.snapshot.connections
            // Down: every stream cut, new ones refused (503) until the edit is committed.
            try await stack.streamAdmin(#"{"mode": "unavailable"}"#)
            try await PushStack.waitUntil("the client saw the drop") { stack.events.snapshot.state == .connecting }
            try await stack.serverEdit("ord_5", notes: "made while the stream was down")
            let before = try await stack.serverEvents()
            #expect(before["open_streams"] as? Int == 0, "the edit must be made while no stream is open")
            try await stack.streamAdmin(#"{"mode": "on"}"#)
            try await PushStack.waitUntil("the missed edit in the replica", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_5") == "made while the stream was down"
            }
            let after = try await stack.serverEvents()
            #expect((after["resumes"] as? Int ?? 0) >= 1, "the reconnect resumed from Last-Event-ID: \(after)")
            #expect(after["resets"] as? Int == 0, "nothing had to be pulled from scratch: \(after)")
            #expect(stack.events.snapshot.connections > connections)
            #expect(stack.events.snapshot.resets == 0)
            #expect(
                stack.scheduler.snapshot.nextRunReason == "periodic"
                    || stack.scheduler.snapshot.nextRunReason == "server-change")
        }
    }

    @Test("the admin drops every stream: the client reconnects at once and events flow again")
    func dropAllReconnects() async throws {
        try await PushStack.with { stack in
            try await stack.settled()
            let connections = stack.events.snapshot.connections
            let dropped = try await stack.backend.send(.POST, "/admin/events/drop").object()
            #expect(dropped["dropped"] as? Int == 1)
            try await PushStack.waitUntil("reconnected") { stack.events.snapshot.connections > connections }
            try await stack.serverEdit("ord_6", notes: "after the reconnect")
            try await PushStack.waitUntil("the edit in the replica", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_6") == "after the reconnect"
            }
        }
    }

    @Test("a stream that falls silent (no heartbeats) is declared dead and reopened")
    func silentStreamIsReopened() async throws {
        try await PushStack.with { backend in
            _ = try await backend.send(.PUT, "/admin/events", json: #"{"heartbeat_ms": 2000}"#)
        } _: { stack in
            try await stack.settled()
            // Heartbeats every 2 s keep the stream alive (silence would be 6 s without a byte; a machine loaded
            // enough to hold a heartbeat back that long may already have reopened it once: counted from here).
            let connections = stack.events.snapshot.connections
            let silences = stack.events.snapshot.silences
            // Timed from before the switch is asked for: a slow admin answer must not shorten what is measured.
            let switched = ContinuousClock.now
            try await stack.streamAdmin(#"{"heartbeats": false}"#)
            // No byte for 3 × 2 s: dead. The watchdog cuts it and the client opens another.
            _ = try await PushStack.waitUntil("silence detected and the stream reopened", timeout: .seconds(30)) {
                stack.events.snapshot.silences > silences && stack.events.snapshot.connections > connections
            }
            let detected = switched.duration(to: .now)
            // The last heartbeat came at most 2 s before the switch: dead no sooner than 4 s after it.
            #expect(detected >= .milliseconds(3950), "declared dead after \(detected), before 3 heartbeats were missed")
            try await stack.streamAdmin(#"{"heartbeats": true}"#)
            try await stack.serverEdit("ord_7", notes: "after the silence")
            try await PushStack.waitUntil("the edit in the replica", timeout: .seconds(30)) {
                try stack.replicaNotes("ord_7") == "after the silence"
            }
        }
    }

    @Test("a server that keeps refusing (503) sees jittered, growing, capped waits: no reconnect storm")
    func refusingServerBackoff() async throws {
        try await PushStack.with { backend in
            _ = try await backend.send(.PUT, "/admin/events", json: #"{"mode": "unavailable"}"#)
        } _: { stack in
            try await PushStack.waitUntil("eight attempts", timeout: .seconds(60)) {
                stack.events.snapshot.attempts >= 8
            }
            let snapshot = stack.events.snapshot
            let times = snapshot.recentAttempts
            let gaps = zip(times, times.dropFirst()).map { $0.1 - $0.0 }
            let backoff = PushStack.fastSettings.backoff
            for (index, gap) in gaps.prefix(7).enumerated() {
                let failures = index + 1
                let step = min(backoff.cap, backoff.base * (1 << (failures - 1)))
                // Never sooner than half the step (equal jitter). (That no wait exceeds the cap is the policy's
                // own test, "reconnect waits"; here a starved machine could only make a gap longer.)
                #expect(gap >= step * 0.5 - .milliseconds(5), "gap \(failures): \(gap) < half of \(step)")
            }
            // Jittered: the waits at the cap (failures 4 to 7: 400…800 ms each) spread out; four draws within 20 ms
            // of each other would be a 1-in-2000 chance.
            let capped = Array(gaps[3..<7])
            #expect(capped.max()! - capped.min()! >= .milliseconds(20), "no jitter: \(capped)")
            // The server saw what the client made, nothing more.
            let served = try await stack.serverEvents()
            #expect((served["requests"] as? Int ?? 0) <= snapshot.attempts + 1)
            #expect(await stack.status().events == "connecting")
        }
    }
}
