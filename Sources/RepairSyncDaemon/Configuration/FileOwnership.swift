internal import Foundation

/// A file's owner and permission bits, through FileManager. (Using `struct stat` directly depends on which C
/// module the compiler saw define it first — Glibc or Dispatch's — and failed the build now and then.)
struct FileOwnership {
    let ownerID: UInt32
    let ownerName: String?
    /// The permission bits (e.g. 0o600).
    let mode: Int

    /// The file's own attributes (a symlink is not followed); nil when it does not exist or cannot be read.
    init?(path: String) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let owner = attributes[.ownerAccountID] as? NSNumber,
            let permissions = attributes[.posixPermissions] as? NSNumber
        else { return nil }
        ownerID = owner.uint32Value
        ownerName = attributes[.ownerAccountName] as? String
        mode = permissions.intValue & 0o777
    }

    var octalMode: String { String(mode, radix: 8) }
    var readableByOthers: Bool { mode & 0o077 != 0 }
}
