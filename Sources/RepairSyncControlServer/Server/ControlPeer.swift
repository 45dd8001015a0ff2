/// Who is on the other end of a control connection, from the kernel (SO_PEERCRED), not from anything the client
/// says.
public struct ControlPeer: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}
