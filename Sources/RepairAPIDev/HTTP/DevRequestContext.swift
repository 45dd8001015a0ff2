public import Hummingbird
internal import NIOCore

/// The per-request context of the development backend: who is asking, from where, and whether this response
/// is to be damaged on purpose (fault injection).
public struct DevRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address, for the admin surface's loopback check.
    var remoteIP: String?
    /// The bearer token, once authenticated.
    var token: String?
    var user: BackendStore.User?
    /// Set by the fault middleware when the handler's response must be cut or truncated.
    var responseFault: FaultKind?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteIP = source.channel.remoteAddress?.ipAddress
    }

    /// Request bodies are small JSON objects; 1 MiB is generous.
    public var maxUploadSize: Int { 1 << 20 }

    var isLoopbackPeer: Bool {
        guard let ip = remoteIP else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }
}
