internal import Foundation

/// A file's owner and permission bits, through FileManager. (Using `struct stat` directly depends on which C
/// module the compiler saw define it first — Glibc or Dispatch's — and failed the build now and then.)
struct FileOwnership {
    let ownerID: UInt32
    let ownerName: String?
    /// The permission bits (e.g. 0o600).
    let mode: Int

    /// The attributes of the file `path` leads to — a symlink is followed, as reading it does (a credential linked
    /// into place is judged by the file that holds it); nil when it does not exist or cannot be read.
    init?(path: String) {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: target),
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
