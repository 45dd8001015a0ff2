internal import Foundation
internal import RepairSyncControlServer
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who may do what on the control socket, by the method's `Access`: anyone who can connect may call an `open`
/// method (the sync status and counts); `group` and `mutating` ones — reading the shop's records, changing anything
/// — are for root, the daemon's own user, and members of the socket's group (`control.group`, else the daemon's
/// group). The peer is the kernel's (SO_PEERCRED), group membership from the group database.
public struct PeerAuthorization: Sendable {
    let daemonUID: UInt32
    let groupID: UInt32

    public init(group: String?) {
        daemonUID = getuid()
        groupID = group.flatMap { name in getgrnam(name).map { $0.pointee.gr_gid } } ?? getgid()
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
        guard let account = getpwuid(peer.uid), let name = account.pointee.pw_name else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, account.pointee.pw_gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(name, account.pointee.pw_gid, &groups, &count) >= 0 else { return false }
        }
        return groups.prefix(Int(count)).contains(groupID)
    }
}
