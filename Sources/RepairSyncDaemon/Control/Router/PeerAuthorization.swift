internal import Foundation
internal import RepairSyncControlServer
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who may do what on the control socket, by the method's `Access`: anyone who can connect may call an `open`
/// method (the sync status and counts); `group` and `mutating` ones — reading the shop's records, changing anything
/// — are for root, the daemon's own user, and members of the socket's group: `control.group`; else, on a socket
/// systemd passed, the socket file's group (the unit's `SocketGroup=`, `repair`: whom the admin let connect); else the
/// daemon's group. The peer is the kernel's (SO_PEERCRED), group membership from the group database.
public struct PeerAuthorization: Sendable {
    let daemonUID: UInt32
    let groupID: UInt32

    /// `inheritedSocket`: the listening socket systemd passed, if any.
    public init(group: String?, inheritedSocket: Int32? = nil) {
        daemonUID = getuid()
        let socketGroup = inheritedSocket.flatMap(SocketFile.init(descriptor:))?.group
        groupID = group.flatMap(Self.groupID(named:)) ?? socketGroup ?? getgid()
    }

    init(daemonUID: UInt32, groupID: UInt32) {
        self.daemonUID = daemonUID
        self.groupID = groupID
    }

    func allows(_ access: Access, for peer: ControlPeer) -> Bool {
        access == .open || isTrusted(peer)
    }

    /// Root, the daemon's user, or a member (primary or supplementary) of the group.
    func isTrusted(_ peer: ControlPeer) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID || peer.gid == groupID { return true }
        guard let account = Self.account(uid: peer.uid) else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(account.name, account.gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(account.name, account.gid, &groups, &count) >= 0 else { return false }
        }
        return groups.prefix(Int(count)).contains(groupID)
    }

    /// A user's name and primary group, from the user database.
    ///
    /// With `getpwuid_r` and a buffer of this call's own: `getpwuid` answers in one buffer shared by every thread, and
    /// requests are judged on several at once (each connection's task, each call of a batch) — one caller's look-up
    /// could overwrite another's between the look-up and the use, and judge a stranger by a member's name.
    static func account(uid: uid_t) -> (name: String, gid: gid_t)? {
        lookUp(passwd.self) {
            getpwuid_r(uid, $0, $1, $2, &$3)
        } map: { entry in
            entry.pw_name.map { (String(cString: $0), entry.pw_gid) }
        }
    }

    /// A group's id from the group database (`getgrnam_r`, for the same reason).
    static func groupID(named name: String) -> gid_t? {
        lookUp(group.self) {
            getgrnam_r(name, $0, $1, $2, &$3)
        } map: {
            $0.gr_gid
        }
    }

    /// Runs a `get…_r` look-up with a buffer that grows while the entry does not fit (`ERANGE`), up to 1 MiB, and
    /// maps the entry while its strings are still in the buffer. Nil when there is no such entry, or on an error.
    private static func lookUp<Entry, Value>(
        _ type: Entry.Type,
        _ call: (UnsafeMutablePointer<Entry>, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<Entry>?) ->
            Int32,
        map: (Entry) -> Value?
    ) -> Value? {
        var size = 1024
        while size <= 1 << 20 {
            let answer: Value?? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
                let entry = UnsafeMutableRawPointer.allocate(
                    byteCount: MemoryLayout<Entry>.size, alignment: MemoryLayout<Entry>.alignment)
                defer { entry.deallocate() }
                entry.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Entry>.size)
                var result: UnsafeMutablePointer<Entry>?
                guard let base = buffer.baseAddress else { return .some(nil) }
                let code = call(entry.assumingMemoryBound(to: Entry.self), base, buffer.count, &result)
                if code == ERANGE { return nil }
                guard code == 0, let found = result else { return .some(nil) }
                return .some(map(found.pointee))
            }
            if let answer { return answer }
            size *= 2
        }
        return nil
    }
}
