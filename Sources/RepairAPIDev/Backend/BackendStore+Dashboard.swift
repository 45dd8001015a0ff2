internal import Foundation
internal import GRDB
internal import RepairSyncModels

extension BackendStore {
    /// A dashboard period and the period it is compared with.
    enum DashboardPeriod: String, CaseIterable {
        case today, week, month

        /// `today` runs from UTC midnight to now and compares with the whole previous day; `week` and `month` are
        /// the last 7 and 30 days, compared with the 7 and 30 days before them.
        func windows(now: Timestamp) -> (current: Range<Timestamp>, previous: Range<Timestamp>, name: String) {
            let day: Int64 = 86_400_000
            let end = now.adding(milliseconds: 1)
            switch self {
            case .today:
                let midnight = Timestamp(
                    millisecondsSince1970: now.millisecondsSince1970 - now.millisecondsSince1970 % day)
                return (midnight..<end, midnight.adding(milliseconds: -day)..<midnight, "previous_day")
            case .week:
                let start = end.adding(milliseconds: -7 * day)
                return (start..<end, start.adding(milliseconds: -7 * day)..<start, "previous_week")
            case .month:
                let start = end.adding(milliseconds: -30 * day)
                return (start..<end, start.adding(milliseconds: -30 * day)..<start, "previous_month")
            }
        }
    }

    private struct Figures {
        var devices = 0
        var revenue = Money.zero
        var clients = 0
        var newClients = 0
        var returningClients = 0
    }

    func dashboard(_ period: DashboardPeriod, now: Timestamp = .now()) async throws -> DashboardStats {
        let windows = period.windows(now: now)
        let (current, previous) = try await pool.read { db in
            (try figures(windows.current, db), try figures(windows.previous, db))
        }
        func count(_ keyPath: KeyPath<Figures, Int>) -> DashboardStats.CountMetric {
            let now = current[keyPath: keyPath]
            let before = previous[keyPath: keyPath]
            return .init(
                current: now,
                comparisons: [
                    .init(
                        period: windows.name, count: before, change: now - before,
                        changePercent: percent(Decimal(now - before), of: Decimal(before)))
                ])
        }
        let revenueChange = current.revenue - previous.revenue
        return DashboardStats(
            period: period.rawValue, devices: count(\.devices),
            revenue: .init(
                current: current.revenue,
                comparisons: [
                    .init(
                        period: windows.name, total: previous.revenue, change: revenueChange,
                        changePercent: percent(revenueChange.amount, of: previous.revenue.amount))
                ]),
            clients: count(\.clients), newClients: count(\.newClients), returningClients: count(\.returningClients))
    }

    private func figures(_ window: Range<Timestamp>, _ db: Database) throws -> Figures {
        let bounds: StatementArguments = [window.lowerBound.rfc3339, window.upperBound.rfc3339]
        var figures = Figures()
        figures.devices =
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM records WHERE collection = 'devices' AND created_at >= ? AND created_at < ?",
                arguments: bounds) ?? 0
        let amounts = try String.fetchAll(
            db,
            sql: """
                SELECT amount FROM records WHERE collection = 'orders' AND created_at >= ? AND created_at < ?
                AND amount IS NOT NULL
                """, arguments: bounds)
        figures.revenue = amounts.compactMap { Money(exactly: $0) }.reduce(.zero, +)
        figures.clients =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(DISTINCT parent_id) FROM records
                    WHERE collection = 'orders' AND created_at >= ? AND created_at < ?
                    """, arguments: bounds) ?? 0
        figures.newClients =
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM records WHERE collection = 'clients' AND created_at >= ? AND created_at < ?",
                arguments: bounds) ?? 0
        figures.returningClients =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(DISTINCT o.parent_id) FROM records o
                    JOIN records c ON c.collection = 'clients' AND c.id = o.parent_id
                    WHERE o.collection = 'orders' AND o.created_at >= ?1 AND o.created_at < ?2 AND c.created_at < ?1
                    """, arguments: bounds) ?? 0
        return figures
    }

    /// `change / before × 100`, rounded to two decimals; nil when `before` is zero.
    private func percent(_ change: Decimal, of before: Decimal) -> Decimal? {
        guard before != 0 else { return nil }
        var value = change / before * 100
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 2, .plain)
        return rounded
    }
}
