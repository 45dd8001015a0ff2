internal import Foundation
internal import NIOCore
internal import NIOPosix
internal import RepairSyncControlClient
internal import RepairSyncProtocol
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// The control socket: a Unix stream socket speaking newline-delimited JSON-RPC 2.0 (docs/rpc.md).
///
/// Bounded everywhere: a line is at most `maxLineBytes` (longer → one error reply, then the connection closes);
/// connections are limited in total and per peer uid (at a limit, the longest-idle connection makes room); each connection is served on its own task and its replies go
/// through NIO's back-pressured writer, so a slow or idle client holds only its own connection.
public struct ControlServer: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maxLineBytes: Int
        public var maxConnections: Int
        public var maxConnectionsPerUID: Int
        /// Notifications a subscriber may fall behind before it is disconnected.
        public var maxQueuedNotifications: Int

        public init(
            maxLineBytes: Int = 1 << 20, maxConnections: Int = 512, maxConnectionsPerUID: Int = 128,
            maxQueuedNotifications: Int = 1000
        ) {
            self.maxLineBytes = maxLineBytes
            self.maxConnections = maxConnections
            self.maxConnectionsPerUID = maxConnectionsPerUID
            self.maxQueuedNotifications = maxQueuedNotifications
        }
    }

    public enum SetupError: Error, Sendable, CustomStringConvertible {
        case alreadyRunning(String)
        case notASocket(String)
        case directory(String, String)

        public var description: String {
            switch self {
            case .alreadyRunning(let path): "another daemon is already listening on \(path)"
            case .notASocket(let path): "\(path) exists and is not a socket; refusing to replace it"
            case .directory(let path, let reason): "cannot prepare the socket directory \(path): \(reason)"
            }
        }
    }

    public let path: String
    public let limits: Limits
    /// The socket's mode: 0660 (owner and group), or 0666 when every local user may read the status.
    public let socketMode: UInt32
    /// A listening socket inherited from systemd (socket activation): served as it is, never created or removed.
    public let inheritedDescriptor: Int32?
    let dispatcher: JSONRPCDispatcher<ControlRequestContext>

    public init(
        path: String, limits: Limits = Limits(), socketMode: UInt32 = 0o660, inheritedDescriptor: Int32? = nil,
        dispatcher: JSONRPCDispatcher<ControlRequestContext>
    ) {
        self.path = path
        self.limits = limits
        self.socketMode = socketMode
        self.inheritedDescriptor = inheritedDescriptor
        self.dispatcher = dispatcher
    }

    /// Creates the socket's directory (mode 0750) when missing, and removes a socket file left by a crash — but
    /// refuses when a daemon still answers on it, or when the path is something other than a socket.
    public static func prepare(path: String, directoryMode: UInt32 = 0o750) throws(SetupError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            guard mkdir(directory, directoryMode) == 0 || errno == EEXIST else {
                throw .directory(directory, String(cString: strerror(errno)))
            }
            // mkdir applies the umask; set the mode the socket's security relies on.
            guard chmod(directory, directoryMode) == 0 else {
                throw .directory(directory, String(cString: strerror(errno)))
            }
        }
        // Not following a symlink, and without `struct stat`, whose defining C module varies between builds.
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
        guard attributes[.type] as? FileAttributeType == .typeSocket else { throw .notASocket(path) }
        if isAnswering(path) { throw .alreadyRunning(path) }
        unlink(path)
    }

    /// Whether something accepts connections on the socket at `path`.
    static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixSocketAddress.with(path) { connect(fd, $0, $1) } == 0
    }

    /// Listens until the calling task is cancelled; `onListening` runs once the socket accepts connections (mode
    /// 0660). The socket file is removed on the way out.
    public func run(onListening: @Sendable () async -> Void = {}) async throws {
        let maxLineBytes = limits.maxLineBytes
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let activity = ConnectionActivity()
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxLineBytes)))
                try channel.pipeline.syncOperations.addHandler(ConnectionActivity.Counter(activity))
                return AcceptedConnection(
                    channel: try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: channel),
                    activity: activity)
            }
        }
        // A client may close its side once it has sent (`echo … | socat - UNIX-CONNECT:…`): its input ends, every
        // line it sent is still answered (the last one even without its newline), and then the connection closes.
        // Without this NIO closes the whole connection at the end of input, before a single reply is written.
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let server: NIOAsyncChannel<AcceptedConnection, Never>
        if let inheritedDescriptor {
            // systemd made the socket (mode, owner, group, directory) and keeps it: serve it, remove nothing.
            server = try await bootstrap.bind(inheritedDescriptor, childChannelInitializer: initializer)
        } else {
            // The directory lets in exactly who the socket does: 0750 for 0660, 0755 for 0666.
            try Self.prepare(path: path, directoryMode: socketMode & 0o006 != 0 ? 0o755 : 0o750)
            server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
            chmod(path, socketMode)
        }
        let ownsFile = inheritedDescriptor == nil
        defer { if ownsFile { unlink(path) } }
        await onListening()
        let table = ConnectionTable(limits: limits)
        do {
            try await acceptLoop(server, table: table)
        } catch  where Task.isCancelled {
            // Cancellation is how the daemon stops the server; whatever the accept loop threw on the way is moot.
        }
    }

    private func acceptLoop(
        _ server: NIOAsyncChannel<AcceptedConnection, Never>, table: ConnectionTable
    ) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await withTaskCancellationHandler {
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask {
                            await self.serve(connection.channel, activity: connection.activity, table: table)
                        }
                    }
                }
            } onCancel: {
                server.channel.close(promise: nil)
            }
            group.cancelAll()
        }
    }

    private func serve(
        _ connection: NIOAsyncChannel<ControlFrame, ByteBuffer>, activity: ConnectionActivity, table: ConnectionTable
    ) async {
        let peer = await Self.peer(of: connection.channel)
        let channel = connection.channel
        try? await connection.executeThenClose { inbound, outbound in
            guard let id = table.admit(peer.uid, activity: activity, channel: channel) else {
                let refusal = JSONRPCDispatcher<ControlRequestContext>.response(
                    id: .null, error: .unavailable("too many control connections, none idle; close some and retry"))
                try await outbound.write(ByteBuffer(string: refusal.serialized + "\n"))
                return
            }
            defer { table.release(id) }
            // Every line is one write of a whole line, so lines never interleave whoever writes them. Replies (and a
            // method's streamed notifications) are written by this task, the one that has them, and awaited: the
            // writer suspends while the socket is not writable, so a client that does not read stops being read.
            // Subscription notifications go through their own queue, counted and bounded.
            let (notifications, writer) = AsyncStream.makeStream(of: String.self)
            let queued = NotificationCount()
            let state = ControlConnection(maxQueuedNotifications: limits.maxQueuedNotifications)
            let context = ControlRequestContext(peer: peer, connection: state)
            state.streamSender.withLock {
                $0 = { line in
                    try await activity.writing { try await outbound.write(ByteBuffer(string: line + "\n")) }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in notifications {
                        queued.count.withLock { $0 -= 1 }
                        // A failed write means the peer is gone: keep draining, so the queue's count stays true.
                        try? await activity.writing { try await outbound.write(ByteBuffer(string: text + "\n")) }
                    }
                }
                group.addTask {
                    for await _ in state.subscriptionSignals {
                        guard let (method, stream) = state.takeSubscription() else { continue }
                        for await params in stream {
                            let tooFar = queued.count.withLock { count in
                                guard count < state.maxQueuedNotifications else { return true }
                                count += 1
                                return false
                            }
                            if tooFar {
                                // Too slow to keep up: disconnect rather than buffer without bound.
                                connection.channel.close(promise: nil)
                                return
                            }
                            writer.yield(JSONRPCDispatcher<ControlRequestContext>.notification(method, params: params))
                        }
                    }
                }
                defer {
                    writer.finish()
                    state.subscriptionAdded.finish()
                    group.cancelAll()
                }
                var frames = inbound.makeAsyncIterator()
                while let frame = try await frames.next() {
                    switch frame {
                    case .line(let line):
                        guard line.readableBytes > 0 else {
                            activity.skip()
                            continue
                        }
                        activity.beginServing()
                        if let reply = await dispatcher.reply(to: line.readableBytesView, context: context) {
                            // A peer gone before its reply changes nothing here: what it asked for ran, and its
                            // after-reply actions (a stop after `purge`) still run.
                            try? await activity.writing { try await outbound.write(ByteBuffer(string: reply + "\n")) }
                        }
                        for action in state.afterReply.withLock({ actions in
                            defer { actions = [] }
                            return actions
                        }) {
                            await action()
                        }
                        // Subscribed before it may look idle (the subscription is served by its own task, later).
                        if state.isSubscribed { table.setSubscribed(id) }
                        table.touch(id)
                        activity.endServing()
                    case .tooLong:
                        activity.finishing()
                        let error = JSONRPCDispatcher<ControlRequestContext>.response(
                            id: .null, error: .invalidRequest("a line longer than \(limits.maxLineBytes) bytes"))
                        try? await outbound.write(ByteBuffer(string: error.serialized + "\n"))
                        // Half-close: the client reads the error and sees the end. Its remaining input is read and
                        // discarded (the decoder keeps nothing), because closing with unread input would reset the
                        // connection and could destroy the error reply before the client reads it.
                        try await connection.channel.close(mode: .output)
                        while try await frames.next() != nil {}
                        return
                    }
                }
            }
        }
    }

    static func peer(of channel: any Channel) async -> ControlPeer {
        guard let provider = channel as? any SocketOptionProvider,
            let credentials: PeerCredentials = try? await provider.unsafeGetSocketOption(
                level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED)
            ).get()
        else { return ControlPeer(pid: -1, uid: UInt32.max, gid: UInt32.max) }
        return ControlPeer(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}

/// The layout of Linux's `struct ucred` (pid_t, uid_t, gid_t), which Glibc's Swift module does not export.
struct PeerCredentials: Sendable {
    var pid: Int32 = -1
    var uid: UInt32 = .max
    var gid: UInt32 = .max
}

/// Notifications queued on one connection and not yet written.
final class NotificationCount: Sendable {
    let count = Mutex(0)
}
