import Foundation
import Testing

@testable import RepairSyncDaemon

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Peer authorization")
struct PeerAuthorizationTests {
    @Test(
        "the user look-up answers every thread its own user, however many ask at once (getpwuid's shared buffer let one caller's look-up overwrite another's)"
    )
    func accountLookUpIsPerCaller() async throws {
        // Every user of this machine's database (root at least), looked up one at a time first.
        var users: [(uid: uid_t, name: String)] = []
        setpwent()
        while let entry = getpwent() {
            users.append((entry.pointee.pw_uid, String(cString: entry.pointee.pw_name)))
        }
        endpwent()
        let expected = users.filter { PeerAuthorization.account(uid: $0.uid)?.name == $0.name }
        #expect(expected.contains { $0.uid == 0 }, "root is in every user database")
        try #require(expected.count >= 2, "two users or more to look up side by side: \(users)")
        // Then from eight threads at once, each cycling through all of them.
        let wrong = await withTaskGroup(of: Int.self) { group in
            for offset in 0..<8 {
                group.addTask {
                    await Task.detached {
                        var wrong = 0
                        for index in 0..<20_000 {
                            let user = expected[(index + offset) % expected.count]
                            if PeerAuthorization.account(uid: user.uid)?.name != user.name { wrong += 1 }
                        }
                        return wrong
                    }.value
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0, "\(wrong) of 160,000 look-ups answered another user")
    }

    @Test("a group is found by name, an unknown one is nil, and a user not in the database is not trusted")
    func groupsAndUnknownUsers() {
        #expect(PeerAuthorization.groupID(named: "root") == 0)
        #expect(PeerAuthorization.groupID(named: "no-such-group-\(getpid())") == nil)
        #expect(PeerAuthorization.account(uid: 3_999_999_999) == nil)
    }
}
