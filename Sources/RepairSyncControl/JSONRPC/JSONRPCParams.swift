/// Typed access to a request's named parameters, with -32602 errors that name the parameter. Unknown parameter
/// names are refused, so a typo (`colections`) is an error rather than a silently ignored option.
public struct JSONRPCParams: Sendable {
    private let members: [(key: String, value: JSONValue)]

    /// `params` absent, or an object. (By-position params are refused: every method has named params.)
    public init(_ params: JSONValue?, allowed: Set<String>) throws(JSONRPCError) {
        switch params {
        case nil, .null?: members = []
        case .object(let members)?: self.members = members
        case .array(let values)? where values.isEmpty: members = []
        case let other?:
            throw .invalidParams("params", "must be an object of named parameters, not \(other.typeName)")
        }
        for member in members where !allowed.contains(member.key) {
            let known = allowed.isEmpty ? "this method takes none" : "known: \(allowed.sorted().joined(separator: ", "))"
            throw .invalidParams(member.key, "is not a parameter of this method (\(known))")
        }
    }

    public func value(_ name: String) -> JSONValue? {
        members.first { $0.key == name }?.value
    }

    public func string(_ name: String) throws(JSONRPCError) -> String {
        guard let value = try optionalString(name) else { throw .invalidParams(name, "is required") }
        return value
    }

    public func optionalString(_ name: String) throws(JSONRPCError) -> String? {
        switch value(name) {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw .invalidParams(name, "must be a string, not \(other.typeName)")
        }
    }

    public func optionalBool(_ name: String) throws(JSONRPCError) -> Bool? {
        switch value(name) {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        case let other?: throw .invalidParams(name, "must be a boolean, not \(other.typeName)")
        }
    }

    public func optionalInt(_ name: String, in range: ClosedRange<Int>) throws(JSONRPCError) -> Int? {
        switch value(name) {
        case nil, .null?: return nil
        case .number(let text)?:
            guard let number = Int(text), range.contains(number) else {
                throw .invalidParams(name, "must be an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        case let other?: throw .invalidParams(name, "must be an integer, not \(other.typeName)")
        }
    }

    public func optionalStrings(_ name: String) throws(JSONRPCError) -> [String]? {
        switch value(name) {
        case nil, .null?: return nil
        case .array(let values)?:
            var strings: [String] = []
            for value in values {
                guard case .string(let text) = value else { throw .invalidParams(name, "must be an array of strings") }
                strings.append(text)
            }
            return strings
        case let other?: throw .invalidParams(name, "must be an array of strings, not \(other.typeName)")
        }
    }
}
