internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The probes that need no records: health, authentication, unknown paths and parameters, the dashboard.
extension ConformanceRun {
    /// 4.1: 200 `{"status":"ok","time":…}` without a token (the engine's `health()` sends none).
    func judgeHealth(_ exchange: Exchange) {
        let id = CheckID(clause: "health")
        guard exchange.status == 200 else {
            findings.problem(id, "\(exchange.requestLine) without a token \(exchange.answer)")
            return
        }
        if let problem = DaemonDecoding.problem(HealthStatus.self, exchange.body) {
            findings.problem(id, "the daemon cannot decode the answer: \(problem)")
            return
        }
        guard let body = try? JSONText.parse(exchange.body), body["status"]?.stringValue == "ok" else {
            findings.problem(id, "status is not \"ok\": \(String(decoding: exchange.body.prefix(100), as: UTF8.self))")
            return
        }
        if let time = body["time"] { inspector.timestamp(time, "health time", origin: exchange.requestLine) }
        findings.summary(id, "200 without a token: status \"ok\", time \(body["time"]?.stringValue ?? "?")")
        findings.examined(id)
    }

    func basicProbes() async {
        if wants(["auth-missing", "auth-invalid"]) { await probeAuthentication() }
        if wants("unknown-collection") { await probeUnknownCollection() }
        if wants("feed-limit-range") { await probeLimits() }
        if wants("feed-unknown-cursor") { await probeUnknownCursor() }
        if wants("dashboard") || wants("money") { await probeDashboard() }
        if wants(Self.compressionClauses) { await probeCompressionNegotiation() }
    }

    /// 2.1: 401 `unauthorized` with `WWW-Authenticate: Bearer`, for a missing token and for one the server never issued.
    private func probeAuthentication() async {
        let missing = CheckID(clause: "auth-missing")
        for path in ["/api/v1/orders/changes?limit=1", "/api/v1/dashboard/stats"] {
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.request("GET", path, authenticated: false)
            }
            judgeUnauthorized(exchange, missing, "without a token")
        }
        findings.summary(missing, "401 unauthorized with WWW-Authenticate: Bearer on the feed and the dashboard")
        let invalid = CheckID(clause: "auth-invalid")
        let (exchange, _) = await client.call(with: client.stranger) { api throws(APIError) in
            _ = try await api.changes(.orders, cursor: nil, limit: 1)
        }
        judgeUnauthorized(exchange, invalid, "with a token the server never issued")
        findings.summary(invalid, "401 unauthorized with WWW-Authenticate: Bearer for a token the server never issued")
    }

    private func judgeUnauthorized(_ exchange: Exchange, _ id: CheckID, _ how: String) {
        guard exchange.status == 401, exchange.errorCode == "unauthorized" else {
            findings.problem(id, "\(exchange.requestLine) \(how) \(exchange.answer), not 401 unauthorized")
            return
        }
        guard let challenge = exchange.header("WWW-Authenticate"), challenge.lowercased().hasPrefix("bearer") else {
            findings.problem(id, "\(exchange.requestLine) \(how): 401 without WWW-Authenticate: Bearer")
            return
        }
        findings.examined(id)
    }

    /// 4: any collection but the five → 404 `not_found`.
    private func probeUnknownCollection() async {
        let id = CheckID(clause: "unknown-collection")
        for path in ["/api/v1/conformance_no_such_collection/changes", "/api/v1/conformance_no_such_collection/x1"] {
            let (exchange, _) = await client.call { api throws(APIError) in _ = try await api.request("GET", path) }
            if exchange.status == 404, exchange.errorCode == "not_found" {
                findings.examined(id)
            } else {
                findings.problem(id, "\(exchange.requestLine) \(exchange.answer), not 404 not_found")
            }
        }
        findings.summary(id, "404 not_found for the changes and a record of an unknown collection")
    }

    /// 4.2: `limit` 0, 1001 and `ten` → 400 `invalid_request` naming `limit`.
    private func probeLimits() async {
        let id = CheckID(clause: "feed-limit-range")
        for limit in ["0", "1001", "ten"] {
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.request("GET", "/api/v1/orders/changes?limit=\(limit)")
            }
            judgeFieldError(exchange, id, status: 400, code: "invalid_request", field: "limit")
        }
        findings.summary(id, "400 invalid_request (field limit) for limit 0, 1001 and \"ten\"")
    }

    /// 4.2: a cursor the server never issued → 410 `cursor_expired`.
    private func probeUnknownCursor() async {
        let id = CheckID(clause: "feed-unknown-cursor")
        let cursor = "repair-api-conformance-unknown-cursor-\(runID)"
        let (exchange, _) = await client.call { api throws(APIError) in
            _ = try await api.changes(.orders, cursor: cursor, limit: 1)
        }
        if exchange.status == 410, exchange.errorCode == "cursor_expired" {
            findings.examined(id)
            findings.summary(id, "410 cursor_expired for a cursor the server never issued")
        } else {
            findings.problem(id, "\(exchange.requestLine) \(exchange.answer), not 410 cursor_expired")
        }
    }

    /// 4.6: every metric for `week`, `month` and the default period (`today`); an unknown period → 400 naming
    /// `period`. Reads only.
    private func probeDashboard() async {
        let id = CheckID(clause: "dashboard")
        for (period, expected) in [("week", "week"), ("month", "month"), (nil, "today")] as [(String?, String)] {
            let (exchange, _) = await client.call { api throws(APIError) in
                if let period {
                    _ = try await api.dashboard(period: period)
                } else {
                    _ = try await api.request("GET", "/api/v1/dashboard/stats")
                }
            }
            guard exchange.status == 200 else {
                findings.problem(id, "\(exchange.requestLine) \(exchange.answer)")
                continue
            }
            if let problem = DaemonDecoding.problem(DashboardStats.self, exchange.body) {
                findings.problem(id, "\(exchange.requestLine): the daemon cannot decode it: \(problem)")
                continue
            }
            guard let body = try? JSONText.parse(exchange.body) else { continue }
            if body["period"]?.stringValue != expected {
                findings.problem(
                    id, "\(exchange.requestLine): period is \(body["period"]?.brief ?? "absent"), not \"\(expected)\"")
                continue
            }
            // Revenue is money (2.3): its current figure, and each comparison's total and change.
            if let revenue = body["revenue"] {
                if let current = revenue["current"] {
                    inspector.money(current, "dashboard revenue.current", origin: exchange.requestLine)
                }
                for comparison in revenue["comparisons"]?.elements ?? [] {
                    for key in ["total", "change"] {
                        if let value = comparison[key] {
                            inspector.money(value, "dashboard revenue comparison \(key)", origin: exchange.requestLine)
                        }
                    }
                }
            }
            findings.examined(id)
        }
        let (exchange, _) = await client.call { api throws(APIError) in _ = try await api.dashboard(period: "fortnight")
        }
        judgeFieldError(exchange, id, status: 400, code: "invalid_request", field: "period")
        findings.summary(
            id, "every metric for week, month and today; 400 invalid_request (field period) for \"fortnight\"")
    }

    /// An error answer with this status, code and field; anything else is a problem of `id`.
    @discardableResult
    func judgeFieldError(_ exchange: Exchange, _ id: CheckID, status: Int, code: String, field: String?) -> Bool {
        let expected = "\(status) \(code)" + (field.map { " (field \($0))" } ?? "")
        guard exchange.status == status, exchange.errorCode == code else {
            findings.problem(id, "\(exchange.requestLine) \(exchange.answer), not \(expected)")
            return false
        }
        if let field {
            let named = (try? JSONText.parse(exchange.body))?["error"]?["field"]?.stringValue
            guard named == field else {
                findings.problem(
                    id,
                    "\(exchange.requestLine) answered \(status) \(code) naming field \(named ?? "none"), not \(field)")
                return false
            }
        }
        findings.examined(id)
        return true
    }
}
