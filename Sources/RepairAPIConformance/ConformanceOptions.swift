/// What to check and how: the server, the token, which sections, and whether to write at all.
public struct ConformanceOptions: Sendable {
    /// The server's origin, e.g. `https://minder.example.com` (a trailing `/api/v1` is dropped: every path the
    /// contract names starts with it).
    public var baseURL: String
    public var token: String
    /// Sections (`4.2`, `5`) or check names (`feed-paging`, `feed-paging:orders`) to run; empty runs every check.
    public var only: [String]
    /// Read-only: run the checks that write nothing and list the writes the others would make.
    public var dryRun: Bool
    /// Create one client, one order and one device (4.7), which stay: the API deletes no record. Off, the checks of
    /// successful creates are skipped; the refused creates (which create nothing) run either way.
    public var creates: Bool
    /// `limit` of the first read of every feed (small, so that a feed spans several pages).
    public var pageLimit: Int
    /// `limit` of the second read, which must give the same records through other page boundaries.
    public var secondPageLimit: Int
    /// A read of one feed that takes more pages than this is reported as not reaching its end.
    public var maxPages: Int
    public var requestTimeout: Duration
    /// How long the run's waits for a 429's or a 503's `Retry-After` (and the pauses after a 503 without one) may
    /// come to in all; past it a refusal is no longer waited out, so a server that refuses everything ends the run
    /// in minutes, not hours.
    public var maxWait: Duration
    /// Records to write to instead of the last of their feed.
    public var orderID: String?
    public var deviceID: String?
    public var ticketID: String?

    public init(
        baseURL: String, token: String, only: [String] = [], dryRun: Bool = false, creates: Bool = false,
        pageLimit: Int = 100,
        secondPageLimit: Int = 1000, maxPages: Int = 100_000, requestTimeout: Duration = .seconds(30),
        maxWait: Duration = .seconds(600), orderID: String? = nil, deviceID: String? = nil, ticketID: String? = nil
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        if base.hasSuffix("/api/v1") { base.removeLast("/api/v1".count) }
        self.baseURL = base
        self.token = token
        self.only = only
        self.dryRun = dryRun
        self.creates = creates
        self.pageLimit = pageLimit
        self.secondPageLimit = secondPageLimit
        self.maxPages = maxPages
        self.requestTimeout = requestTimeout
        self.maxWait = maxWait
        self.orderID = orderID
        self.deviceID = deviceID
        self.ticketID = ticketID
    }

    /// Whether `--only` selects the check: by section (`4` selects `4.2`), by clause, or by check name.
    public func selects(_ id: CheckID, section: String) -> Bool {
        only.isEmpty
            || only.contains { filter in
                section == filter || section.hasPrefix(filter + ".") || id.clause == filter
                    || id.description == filter
            }
    }

    /// The `--only` values that select no check at all (a typo, most likely).
    public var unknownFilters: [String] {
        only.filter { filter in
            !ConformanceCatalog.clauses.contains { clause in
                clause.checkIDs.contains {
                    ConformanceOptions(baseURL: "", token: "", only: [filter]).selects($0, section: clause.section)
                }
            }
        }
    }
}
