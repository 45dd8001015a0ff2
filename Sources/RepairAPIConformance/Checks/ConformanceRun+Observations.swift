internal import Foundation
internal import RepairSyncModels
internal import RepairSyncProtocol

/// Clauses judged over every exchange of the run (2.1, 6), and those only the server can provoke (410 mid-read,
/// 429), judged when they occurred.
extension ConformanceRun {
    func judgeObservations() {
        let exchanges = client.recorder.all.filter { $0.status != nil }
        judgeDates(exchanges)
        judgeContentTypes(exchanges)
        judgeCompression(exchanges)
        judgeVary(exchanges)
        judgeErrorBodies(exchanges)
        judgeExpiredCursors()
        judgeRateLimits()
        let keys = findings.examinedCount(RecordInspector.keysCheck)
        findings.summary(
            RecordInspector.keysCheck,
            "\(plural(keys, "record")) (in pages, GETs and write answers) carried every key of their shape, typed")
        findings.summary(
            RecordInspector.timestampsCheck,
            "\(plural(findings.examinedCount(RecordInspector.timestampsCheck), "timestamp")), all RFC 3339")
        findings.summary(
            RecordInspector.moneyCheck,
            "\(plural(findings.examinedCount(RecordInspector.moneyCheck), "amount")), all exact decimals")
        let tombstones = CheckID(clause: "tombstones")
        if !findings.hasProblems(tombstones) {
            let seen = reads.values.reduce(0) { $0 + $1.tombstones.count }
            findings.summary(
                tombstones, "\(plural(seen, "tombstone")) of {id, deleted_at}; a deleted record's GET answered 404")
            findings.notExercised(tombstones, "no feed held a tombstone (delete a record on the server to exercise it)")
        }
    }

    /// 2.1: `Date` in IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) on every response.
    private func judgeDates(_ exchanges: [Exchange]) {
        let id = CheckID(clause: "date-header")
        var missing = 0
        for exchange in exchanges {
            guard let date = exchange.header("Date") else {
                missing += 1
                findings.problem(id, "\(exchange.requestLine) answered \(exchange.status ?? 0) without a Date header")
                continue
            }
            if date.wholeMatch(of: /[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) == nil {
                findings.problem(id, "\(exchange.requestLine): Date \"\(date)\" is not an HTTP date (IMF-fixdate)")
            } else {
                findings.examined(id)
            }
        }
        if missing == 0 { findings.summary(id, "all \(exchanges.count) responses carried an HTTP date") }
    }

    /// 2.1: bodies are JSON, labelled `application/json` (UTF-8 when a charset is named).
    private func judgeContentTypes(_ exchanges: [Exchange]) {
        let id = CheckID(clause: "content-type")
        var bodies = 0
        for exchange in exchanges where !exchange.body.isEmpty {
            bodies += 1
            let type = exchange.header("Content-Type")?.lowercased() ?? ""
            let parts = type.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            let media = parts.first ?? ""
            let charset = parts.dropFirst().first { $0.hasPrefix("charset=") }?.dropFirst("charset=".count)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if media != "application/json" && !media.hasSuffix("+json") {
                findings.problem(id, "\(exchange.requestLine) answered Content-Type \(type.isEmpty ? "none" : type)")
            } else if let charset, charset != "utf-8" {
                findings.problem(id, "\(exchange.requestLine) answered charset \(charset), not utf-8")
            } else if (try? JSONText.parse(exchange.body)) == nil {
                findings.problem(id, "\(exchange.requestLine) answered a body that is not JSON")
            } else {
                findings.examined(id)
            }
        }
        findings.summary(id, "all \(bodies) bodies were JSON labelled application/json")
    }

    /// 2.1, informational: does the server gzip large answers? Compression is optional, so this never fails: a
    /// server that compresses passes, one that does not is reported as not exercised.
    private func judgeCompression(_ exchanges: [Exchange]) {
        let id = CheckID(clause: "compression")
        let large = exchanges.filter { $0.body.count >= 1024 }
        let compressed = large.filter { $0.header("Content-Encoding")?.lowercased() == "gzip" }.count
        findings.examined(id, compressed)
        findings.summary(id, "\(compressed) of \(plural(large.count, "answer")) of 1 KiB or more came gzip-compressed")
        findings.notExercised(
            id,
            "none of \(plural(large.count, "answer")) of 1 KiB or more came compressed: the server does not compress (optional)"
        )
    }

    /// 6: every error is `{"error": {"code": …, "message": …}}` (with a string `field` when there is one).
    private func judgeErrorBodies(_ exchanges: [Exchange]) {
        let id = CheckID(clause: "error-shape")
        var errors = 0
        for exchange in exchanges where (exchange.status ?? 0) >= 400 {
            errors += 1
            let error = (try? JSONText.parse(exchange.body))?["error"]
            guard let error, error["code"]?.stringValue != nil, error["message"]?.stringValue != nil else {
                findings.problem(
                    id,
                    "\(exchange.requestLine) answered \(exchange.status ?? 0) without {\"error\": {\"code\", \"message\"}}"
                )
                continue
            }
            if let field = error["field"], field.stringValue == nil, field != .null {
                findings.problem(id, "\(exchange.requestLine): error.field is \(field.typeName), not a string")
                continue
            }
            findings.examined(id)
        }
        findings.summary(id, "all \(errors) error answers had the contract's error body")
    }

    /// 4.2: a 410 in the middle of a read says `cursor_expired`, and reading from the start then worked.
    private func judgeExpiredCursors() {
        let id = CheckID(clause: "feed-expired")
        for (collection, exchange, recovered) in expiredCursors {
            if exchange.errorCode != "cursor_expired" {
                findings.problem(
                    id,
                    "\(exchange.requestLine) answered 410 \(exchange.errorCode ?? "without the error body"), not cursor_expired"
                )
            } else if !recovered {
                findings.problem(id, "after a 410 the \(collection.name) feed could not be read from its start")
            } else {
                findings.examined(id)
            }
        }
        findings.summary(
            id,
            "\(plural(expiredCursors.count, "cursor")) expired (410 cursor_expired); each feed then read from its start"
        )
        findings.notExercised(id, "no cursor expired during the run (the server decides when; it cannot be provoked)")
    }

    /// 6: a 429 names `rate_limited` and a `Retry-After` the daemon can read (seconds or an HTTP date), and the
    /// request then went through; a 503 that carried a `Retry-After` is held to the same (naming `unavailable`).
    private func judgeRateLimits() {
        let observations = client.rateLimits
        for (clause, status, code) in [("rate-limit", 429, "rate_limited"), ("unavailable", 503, "unavailable")] {
            let id = CheckID(clause: clause)
            var forms: [String: Int] = [:]
            let met = observations.filter { $0.exchange.status == status }
            for observation in met {
                let exchange = observation.exchange
                let retryAfter = exchange.header("Retry-After")?.trimmingCharacters(in: .whitespaces)
                // Section 6: a 503 may come without Retry-After ("not now"); a 429 may not.
                let bare = status == 503 && retryAfter == nil
                if exchange.errorCode != code {
                    findings.problem(
                        id,
                        "\(exchange.requestLine) answered \(status) \(exchange.errorCode ?? "without the error body"), not \(code)"
                    )
                } else if !bare && ConformanceClient.understoodRetryAfter(exchange) == nil {
                    findings.problem(
                        id,
                        "\(exchange.requestLine) answered \(status) with Retry-After \(retryAfter.map { "\"\($0)\"" } ?? "missing"), "
                            + "neither seconds nor an HTTP date")
                } else if observation.outOfPatience {
                    findings.problem(
                        id,
                        "\(exchange.requestLine) was refused once the run's waits had come to --max-wait, and not waited out"
                    )
                } else if !observation.retrySucceeded {
                    findings.problem(
                        id,
                        "\(exchange.requestLine) was still refused after waiting \(bare ? "1, 2 and 4 s" : "out Retry-After three times")"
                    )
                } else {
                    let form =
                        bare ? "no Retry-After" : retryAfter.flatMap { Int($0) } == nil ? "an HTTP date" : "seconds"
                    forms[form, default: 0] += 1
                    findings.examined(id)
                }
            }
            let said = forms.keys.sorted().map { "\(forms[$0]!) in \($0)" }.joined(separator: ", ")
            findings.summary(
                id,
                "\(plural(met.count, "\(status) answer")) (Retry-After: \(said)); every request went through after the wait"
            )
        }
        findings.notExercised(
            CheckID(clause: "rate-limit"), "the server never answered 429 (it cannot be provoked without flooding it)")
        findings.notExercised(
            CheckID(clause: "unavailable"), "the server never answered 503 (it cannot be provoked)")
    }
}
