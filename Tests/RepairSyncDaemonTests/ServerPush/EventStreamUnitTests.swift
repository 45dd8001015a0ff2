import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncModels
import Testing

/// The pure parts of the change-stream client: the event-stream parser (bounded, chunks cut anywhere), the
/// reconnect backoff, and the schedule's debounce of announced changes.
@Suite("Event stream: parser, backoff, debounce")
struct EventStreamUnitTests {
    static let sample = Array(
        "event: ready\nid: 7\ndata: {\"heartbeat_ms\":15000}\n\n: heartbeat\n\r\nevent: change\r\nid: 8\r\ndata: {\"collection\":\"orders\"}\r\n\r\nevent: reset\rid: 9\rdata: {}\r\rdata: a\ndata: b\n\n"
            .utf8)

    static let expected = [
        ServerSentEvent(type: "ready", id: "7", data: "{\"heartbeat_ms\":15000}"),
        ServerSentEvent(type: "change", id: "8", data: "{\"collection\":\"orders\"}"),
        ServerSentEvent(type: "reset", id: "9", data: "{}"),
        ServerSentEvent(type: "message", id: "9", data: "a\nb"),
    ]

    @Test("events come out the same whatever the chunking: LF, CRLF (even split across chunks) and CR line ends")
    func parsesAnyChunking() throws {
        for size in [1, 2, 3, 5, 7, 64, Self.sample.count] {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            var index = 0
            while index < Self.sample.count {
                let end = min(index + size, Self.sample.count)
                events += try parser.feed(Self.sample[index..<end])
                index = end
            }
            #expect(events == Self.expected, "chunks of \(size)")
            #expect(parser.lastEventID == "9")
        }
    }

    @Test("a line with no end, or an event too large, fails the stream instead of growing memory")
    func bounded() throws {
        var parser = ServerSentEventParser(maxLineBytes: 100, maxEventBytes: 1000)
        #expect(throws: ServerSentEventParser.Failure.lineTooLong(limit: 100)) {
            _ = try parser.feed(Array(repeating: UInt8(ascii: "x"), count: 101))
        }
        var large = ServerSentEventParser(maxLineBytes: 100, maxEventBytes: 1000)
        let line = Array("data: \(String(repeating: "y", count: 90))\n".utf8)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge(limit: 1000)) {
            for _ in 0..<20 { _ = try large.feed(line) }
        }
        // Heartbeat comments never accumulate.
        var quiet = ServerSentEventParser(maxLineBytes: 100, maxEventBytes: 1000)
        for _ in 0..<10_000 { #expect(try quiet.feed(Array(": heartbeat\n\n".utf8)).isEmpty) }
    }

    @Test("reconnect waits: between half and all of an exponential step, capped, different draws differ")
    func backoff() {
        let backoff = EventStreamBackoff(base: .seconds(1), cap: .seconds(60))
        for failures in 1...40 {
            let step = min(Duration.seconds(60), .seconds(1) * (1 << min(failures - 1, 30)))
            #expect(backoff.delay(failures: failures, random: 0) == step * 0.5)
            #expect(backoff.delay(failures: failures, random: 1) == step)
            #expect(backoff.delay(failures: failures, random: 0.3) != backoff.delay(failures: failures, random: 0.7))
        }
        #expect(backoff.delay(failures: 1000, random: 1) == .seconds(60))
    }

    @Test("announced changes are pulled after a short debounce, a burst in one run, never later than the maximum delay")
    func scheduleDebounce() throws {
        let start = ContinuousClock.now
        var schedule = SyncSchedule(policy: SchedulePolicy(interval: .seconds(3600), jitter: 0), now: start)
        let startup = try #require(schedule.nextRun())
        schedule.runStarted(startup)
        schedule.runFinished(startup, outcome: .succeeded, now: start, random: 0.5)
        // 200 announcements 10 ms apart: the run is due 500 ms after the first at the latest.
        for index in 0..<200 {
            schedule.serverChanged(
                [index % 2 == 0 ? .orders : .devices], now: start.advanced(by: .milliseconds(10 * index)))
        }
        let run = try #require(schedule.nextRun())
        #expect(run.reason == .serverChange)
        #expect(run.collections == [.orders, .devices])
        #expect(run.full == false)
        #expect(run.at == start.advanced(by: .milliseconds(500)))
        schedule.runStarted(run)
        schedule.runFinished(run, outcome: .succeeded, now: start.advanced(by: .seconds(2)), random: 0.5)
        // Nothing left but the periodic run, which the pull did not move.
        let next = try #require(schedule.nextRun())
        #expect(next.reason == .periodic)
        #expect(next.at == start.advanced(by: .seconds(3600)))
        // A single announcement: 100 ms later.
        let later = start.advanced(by: .seconds(10))
        schedule.serverChanged([.tickets], now: later)
        #expect(schedule.nextRun()?.at == later.advanced(by: .milliseconds(100)))
        // Paused: only manual runs.
        schedule.setPaused(true)
        #expect(schedule.nextRun() == nil)
    }
}
