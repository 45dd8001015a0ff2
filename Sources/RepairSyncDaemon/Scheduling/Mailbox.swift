/// Events for a loop that also waits for a time: `next(until:)` returns the next event, or nil once the deadline
/// passes — without polling and without losing an event that arrives as the deadline does.
actor Mailbox<Event: Sendable> {
    private var queue: [Event] = []
    private var waiter: CheckedContinuation<Event?, Never>?

    func post(_ event: Event) {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: event)
        } else {
            queue.append(event)
        }
    }

    /// The next event, waiting at most until `deadline` (nil: until an event or cancellation).
    func next(until deadline: ContinuousClock.Instant?) async -> Event? {
        if !queue.isEmpty { return queue.removeFirst() }
        if let deadline, deadline <= .now { return nil }
        return await withTaskGroup(of: Event?.self) { group in
            group.addTask { await self.waitForEvent() }
            if let deadline {
                group.addTask {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    return nil
                }
            }
            var result = await group.next() ?? nil
            group.cancelAll()
            // An event delivered while the other child won the race is still this call's result.
            for await late in group where late != nil { result = result ?? late }
            return result
        }
    }

    private func waitForEvent() async -> Event? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if !queue.isEmpty {
                    continuation.resume(returning: queue.removeFirst())
                } else if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    waiter = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter() }
        }
    }

    private func cancelWaiter() {
        waiter?.resume(returning: nil)
        waiter = nil
    }
}
