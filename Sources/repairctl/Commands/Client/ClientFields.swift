import ArgumentParser
import RepairSyncProtocol

/// A new client's details as options: of `client new`, and of `order new --new-client`.
struct ClientFields: ParsableArguments {
    @Option(help: "Email address (required for a new client).") var email: String?
    @Option var firstName: String?
    @Option var lastName: String?
    @Option var phone: String?
    @Option var company: String?
    @Option var address: String?
    @Option var city: String?
    @Option var postcode: String?
    @Option(name: .customLong("client-notes"), help: "Notes about the client.") var notes: String?
    @Option(
        name: .customLong("client-id"),
        help: ArgumentHelp(
            "The client's id, a lowercase UUID (makes a repeated command safe); made by the daemon when absent.",
            valueName: "uuid"))
    var id: String?

    var isEmpty: Bool {
        [email, firstName, lastName, phone, company, address, city, postcode, notes, id].allSatisfy { $0 == nil }
    }

    /// The params of `createClient`; a missing email is a usage error here rather than a round trip.
    func params() throws -> RPC.CreateClient.Params {
        guard let email else { throw ValidationError("a new client needs --email") }
        return .init(
            email: email, firstName: firstName, lastName: lastName, phone: phone, company: company, address: address,
            city: city, postcode: postcode, notes: notes, id: id)
    }
}
