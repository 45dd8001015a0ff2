extension RPC {
    /// A piece of the store's copy during `backup`, each written before the next is read.
    public enum BackupChunk: ControlNotification {
        public static let name = "backupChunk"

        public struct Params: Codable, Sendable, Hashable {
            /// Base64, 256 KiB of the file before encoding.
            public var data: String

            public init(data: String) { self.data = data }
        }
    }
}
