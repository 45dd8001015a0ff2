extension RPC {
    /// The daemon's version and the protocol's (`RPC.protocolVersion`).
    public enum Version: ControlMethod {
        public static let name = "version"
        public static let access = Access.open

        public struct Result: Codable, Sendable, Hashable {
            public var version: String
            public var protocolVersion: Int

            public init(version: String, protocolVersion: Int) {
                self.version = version
                self.protocolVersion = protocolVersion
            }

            enum CodingKeys: String, CodingKey {
                case version
                case protocolVersion = "protocol"
            }
        }
    }
}
