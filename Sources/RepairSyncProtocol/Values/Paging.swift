/// The paging params of the list methods: `limit` 1…1000 (default 100), `offset` from 0.
public enum Paging {
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    public static func validate(limit: Int?, offset: Int?) throws(JSONRPCError) {
        if let limit, !(1...maxLimit).contains(limit) {
            throw .invalidParams("limit", "must be an integer in 1...\(maxLimit)")
        }
        if let offset, offset < 0 { throw .invalidParams("offset", "must be an integer in 0...\(Int.max)") }
    }
}
