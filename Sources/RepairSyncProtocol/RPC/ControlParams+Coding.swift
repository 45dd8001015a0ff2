extension ControlParams {
    /// Params as a request carries them: absent, `null`, `{}` or `[]` for none, else an object of named params.
    /// Unknown names, wrong types, missing or out-of-range values are -32602 errors naming the parameter.
    public static func decode(from params: JSONValue?) throws(JSONRPCError) -> Self {
        let members: [(key: String, value: JSONValue)]
        switch params {
        case nil, .null?: members = []
        case .object(let object)?: members = object
        case .array(let values)? where values.isEmpty: members = []
        case let other?:
            throw .invalidParams("params", "must be an object of named parameters, not \(other.typeArticle)")
        }
        let known = names
        for member in members where !known.contains(member.key) {
            let listed = known.isEmpty ? "this method takes none" : "known: \(known.sorted().joined(separator: ", "))"
            throw .invalidParams(member.key, "is not a parameter of this method (\(listed))")
        }
        let decoded: Self
        do {
            decoded = try JSONValueDecoder().decode(Self.self, from: .object(members))
        } catch let error as DecodingError {
            throw JSONRPCError(decoding: error)
        } catch let error as JSONRPCError {
            throw error
        } catch {
            throw .invalidParams("params", "\(error)")
        }
        try decoded.validate()
        return decoded
    }

    /// The params as a request carries them; nil when there are none (the request then has no `params`).
    public func encoded() throws -> JSONValue? {
        // A method without params encodes nothing: no runtime type checks at all on the badge's path.
        if Self.names.isEmpty { return nil }
        let json = try JSONValueEncoder().encode(self)
        if case .object(let members) = json, members.isEmpty { return nil }
        return json
    }
}

extension JSONRPCError {
    /// -32602 for a value that did not decode, naming the (top-level) parameter.
    public init(decoding error: DecodingError) {
        let path: [any CodingKey]
        let detail: String
        switch error {
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            detail = "is required"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
            detail = context.debugDescription
        @unknown default:
            path = []
            detail = "\(error)"
        }
        let param = path.first?.stringValue ?? "params"
        let inner = path.dropFirst().map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        self = .invalidParams(param, inner.isEmpty ? detail : "\(inner.drop { $0 == "." }): \(detail)")
    }
}
