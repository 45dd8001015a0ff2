internal import Foundation
internal import Logging
internal import RepairSyncStore

#if canImport(Glibc)
    internal import Glibc
#endif

/// Who may use the store's files, from `store.group_readable` and `store.group_writable`:
///
/// | setting | state directory | database, `-wal`, `-shm` |
/// | --- | --- | --- |
/// | neither (default) | 0700 | 0600 |
/// | `group_readable` | 0750 | 0640 |
/// | `group_writable` | 2770, the socket's group | 0660, the socket's group |
///
/// With `group_writable` the directory is setgid, so a `-wal` or `-shm` file that a member's tool creates (SQLite
/// gives it the database's mode) belongs to the group too. Applied at every start, after systemd has set its own
/// `StateDirectoryMode` and ownership.
struct StoreAccess {
    let directoryMode: UInt32
    let fileMode: UInt32
    /// The group to give the directory and files; nil keeps the daemon's.
    let groupID: gid_t?

    /// `group`: the socket's group, the one the control socket trusts (`PeerAuthorization.groupID`).
    init(_ store: DaemonConfiguration.Store, group: gid_t?) {
        if store.groupWritable {
            (directoryMode, fileMode, groupID) = (0o2770, 0o660, group)
        } else if store.groupReadable {
            (directoryMode, fileMode, groupID) = (0o750, 0o640, nil)
        } else {
            (directoryMode, fileMode, groupID) = (0o700, 0o600, nil)
        }
    }

    /// Creates the store's directory if needed and gives it its mode and group — when it is the store's own.
    func prepareDirectory(for storePath: String, logger: Logger) throws {
        let directory = (storePath as NSString).deletingLastPathComponent
        let existed = FileManager.default.fileExists(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // A directory the store shares is left as it is: made 0700 it would lock every other user and service out
        // (store.path /replica.sqlite made `/` 0700, and no other user's program could load its libraries).
        guard !existed || Self.isStoresOwn(directory, storePath: storePath) else {
            logger.notice(
                "the store's directory holds other files: its mode and group are left as they are (the store's own files get theirs)",
                metadata: ["directory": "\(directory)"])
            return
        }
        if let groupID, chown(directory, UInt32.max, groupID) != 0 {
            logger.error(
                "cannot give the store's directory to its group",
                metadata: ["directory": "\(directory)", "errno": "\(errno)"])
        }
        // After chown, which clears the setgid bit on some systems; and explicitly, since mkdir applies the umask.
        if chmod(directory, mode_t(directoryMode)) != 0, directoryMode & 0o2000 != 0 {
            // systemd's RestrictSUIDSGID= refuses the setgid bit. The group still gets the directory; the store's
            // files are given to it below, and they exist for as long as the daemon runs.
            chmod(directory, mode_t(directoryMode & 0o777))
            logger.notice(
                "the store's directory cannot be setgid here (RestrictSUIDSGID?); it is 0770 and the daemon gives the store's files to the group itself",
                metadata: ["directory": "\(directory)"])
        }
    }

    /// A directory that is the store's alone: named after the daemon (systemd's `StateDirectory=repairsyncd`), or
    /// holding nothing but the store's files — the database, its `-wal`, `-shm` and lock, copies kept aside, a
    /// backup being made.
    static func isStoresOwn(_ directory: String, storePath: String) -> Bool {
        if (directory as NSString).lastPathComponent == "repairsyncd" { return true }
        let name = (storePath as NSString).lastPathComponent
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        return entries.allSatisfy { $0.hasPrefix(name) || ($0.hasPrefix("backup-") && $0.hasSuffix(".sqlite")) }
    }

    /// Gives the database, its WAL and shared-memory files their mode and group.
    func apply(toStoreAt path: String, logger: Logger) {
        ReplicaStore.setMode(fileMode, at: path)
        guard let groupID else { return }
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            if chown(file, UInt32.max, groupID) != 0 {
                logger.error(
                    "cannot give a store file to its group", metadata: ["file": "\(file)", "errno": "\(errno)"])
            }
        }
    }
}
