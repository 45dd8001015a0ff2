/// A customer of the shop.
public struct Client: SyncRecord {
    public static let collection = SyncCollection.clients

    public var id: String
    public var email: String
    public var firstName: String?
    public var lastName: String?
    public var phone: String?
    public var company: String?
    public var address: String?
    public var city: String?
    public var postcode: String?
    public var notes: String?
    public var orderCount: Int
    public var totalSpent: Money
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var version: Int

    public init(
        id: String, email: String, firstName: String? = nil, lastName: String? = nil, phone: String? = nil,
        company: String? = nil, address: String? = nil, city: String? = nil, postcode: String? = nil,
        notes: String? = nil, orderCount: Int = 0, totalSpent: Money = .zero, createdAt: Timestamp,
        updatedAt: Timestamp, version: Int
    ) {
        self.id = id
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.phone = phone
        self.company = company
        self.address = address
        self.city = city
        self.postcode = postcode
        self.notes = notes
        self.orderCount = orderCount
        self.totalSpent = totalSpent
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, email
        case firstName = "first_name"
        case lastName = "last_name"
        case phone, company, address, city, postcode, notes
        case orderCount = "order_count"
        case totalSpent = "total_spent"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
    }

    /// Every key must be there, `null` when empty (docs/api.md 2.4): a key left out is refused, not read as a
    /// `null` (`decodeNullable`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        email = try c.decode(String.self, forKey: .email)
        firstName = try c.decodeNullable(String.self, forKey: .firstName)
        lastName = try c.decodeNullable(String.self, forKey: .lastName)
        phone = try c.decodeNullable(String.self, forKey: .phone)
        company = try c.decodeNullable(String.self, forKey: .company)
        address = try c.decodeNullable(String.self, forKey: .address)
        city = try c.decodeNullable(String.self, forKey: .city)
        postcode = try c.decodeNullable(String.self, forKey: .postcode)
        notes = try c.decodeNullable(String.self, forKey: .notes)
        orderCount = try c.decode(Int.self, forKey: .orderCount)
        totalSpent = try c.decode(Money.self, forKey: .totalSpent)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try c.decode(Timestamp.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(email, forKey: .email)
        try c.encode(firstName, forKey: .firstName)
        try c.encode(lastName, forKey: .lastName)
        try c.encode(phone, forKey: .phone)
        try c.encode(company, forKey: .company)
        try c.encode(address, forKey: .address)
        try c.encode(city, forKey: .city)
        try c.encode(postcode, forKey: .postcode)
        try c.encode(notes, forKey: .notes)
        try c.encode(orderCount, forKey: .orderCount)
        try c.encode(totalSpent, forKey: .totalSpent)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(version, forKey: .version)
    }

    /// "Ada Lovelace"; the first or last name alone when only one is known; empty when neither is.
    public var fullName: String {
        [firstName, lastName].compactMap { $0?.trimmed }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// What to call the client: the full name, else the company, else the email address.
    public var displayName: String {
        if !fullName.isEmpty { return fullName }
        if let company = company?.trimmed, !company.isEmpty { return company }
        return email
    }

    /// "AL" for Ada Lovelace; from the company or the email address when there is no name.
    public var initials: String {
        let nameParts = [firstName, lastName].compactMap { $0?.trimmed }.filter { !$0.isEmpty }
        if !nameParts.isEmpty {
            return String(nameParts.compactMap(\.first)).uppercased()
        }
        let fallback = (company?.trimmed).flatMap { $0.isEmpty ? nil : $0 } ?? email
        return fallback.first.map { String($0).uppercased() } ?? "?"
    }
}
