import Testing

@testable import RepairSyncDaemon

@Suite("Audit allowance")
struct AuditAllowanceTests {
    let start = ContinuousClock.now
    let tool = AuditAllowance.Caller(uid: 1000, pid: 4242)
    let counter = AuditAllowance.Caller(uid: 1000, pid: 777)

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("a caller's first calls in a window are logged; the rest are counted and summed up when the window ends")
    func countsBeyondTheAllowance() {
        var allowance = AuditAllowance(lines: 20, window: .seconds(1))
        var decisions: [AuditAllowance.Decision] = []
        for index in 0..<25 {
            let (decision, ended) = allowance.admit(
                tool, method: index.isMultiple(of: 2) ? "queueChange" : "updateOrder", subject: "ord_\(index)",
                at: at(index * 10))
            #expect(ended.isEmpty)
            decisions.append(decision)
        }
        #expect(decisions.prefix(20).allSatisfy { $0 == .log })
        #expect(decisions[20] == .counted(first: true), "the first counted call asks for a summary")
        #expect(decisions.suffix(4).allSatisfy { $0 == .counted(first: false) })
        #expect(allowance.nextSummaryDue == at(1000))
        #expect(allowance.summaries(endedBy: at(999)).isEmpty, "the window is still open")
        let summaries = allowance.summaries(endedBy: at(1000))
        #expect(
            summaries == [
                .init(
                    caller: tool, calls: 5,
                    methods: [.init(name: "queueChange", calls: 3), .init(name: "updateOrder", calls: 2)],
                    first: "ord_20", last: "ord_24")
            ])
        #expect(allowance.nextSummaryDue == nil)
        #expect(allowance.openWindows == 0)
    }

    @Test("each caller has an allowance of its own")
    func callersApart() {
        var allowance = AuditAllowance(lines: 2, window: .seconds(1))
        #expect(allowance.admit(tool, method: "queueChange", subject: "a", at: at(0)).0 == .log)
        #expect(allowance.admit(tool, method: "queueChange", subject: "b", at: at(1)).0 == .log)
        #expect(allowance.admit(tool, method: "queueChange", subject: "c", at: at(2)).0 == .counted(first: true))
        #expect(allowance.admit(counter, method: "updateOrder", subject: "d", at: at(3)).0 == .log)
        #expect(allowance.nextSummaryDue == at(1000), "only the tool's window counted anything")
    }

    @Test("a caller's next window logs again, and hands over the summary of the one that ended")
    func nextWindow() {
        var allowance = AuditAllowance(lines: 1, window: .seconds(1))
        _ = allowance.admit(tool, method: "queueChange", subject: "a", at: at(0))
        _ = allowance.admit(tool, method: "queueChange", subject: "b", at: at(500))
        let (decision, ended) = allowance.admit(tool, method: "queueChange", subject: "c", at: at(1500))
        #expect(decision == .log)
        #expect(
            ended == [
                .init(caller: tool, calls: 1, methods: [.init(name: "queueChange", calls: 1)], first: "b", last: "b")
            ])
        #expect(allowance.nextSummaryDue == nil, "the new window has counted nothing")
    }

    @Test("windows that ended are forgotten once many callers are known: the allowance's memory is bounded")
    func bounded() {
        var allowance = AuditAllowance(lines: 1, window: .seconds(1), sweepAbove: 8)
        // A cron job: a new pid every time, one call each, a second apart.
        for index in 0..<100 {
            let caller = AuditAllowance.Caller(uid: 1000, pid: Int32(index))
            #expect(allowance.admit(caller, method: "queueChange", subject: "ord", at: at(index * 1000)).0 == .log)
            #expect(allowance.openWindows <= 9)
        }
    }

    @Test("stopping hands over every summary still owed, ended or not")
    func remaining() {
        var allowance = AuditAllowance(lines: 1, window: .seconds(1))
        for subject in ["a", "b", "c"] { _ = allowance.admit(tool, method: "queueChange", subject: subject, at: at(0)) }
        _ = allowance.admit(counter, method: "discard", subject: "7", at: at(10))
        #expect(
            allowance.remainingSummaries() == [
                .init(caller: tool, calls: 2, methods: [.init(name: "queueChange", calls: 2)], first: "b", last: "c")
            ])
        #expect(allowance.openWindows == 0)
    }
}
