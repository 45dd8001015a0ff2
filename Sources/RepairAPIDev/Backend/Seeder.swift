internal import Foundation
internal import GRDB
public import RepairSyncModels

/// What to generate: `orders` orders and, in proportion, 1.5× devices, ½× clients, ½× tickets and 2× messages.
public struct SeedOptions: Sendable {
    public var orders: Int
    public var seedValue: UInt64
    /// The "now" that generated timestamps lead up to (the last two years before it).
    public var anchor: Timestamp

    public init(orders: Int, seedValue: UInt64 = 1, anchor: Timestamp = .now()) {
        self.orders = orders
        self.seedValue = seedValue
        self.anchor = anchor
    }

    public var clients: Int { max(1, orders / 2) }
    public var devices: Int { orders + orders / 2 }
    public var tickets: Int { max(1, orders / 2) }
    public var messagesPerTicket: Int { 4 }
}

/// Generates a realistic shop: the same options always give the same records (ids, names, amounts, statuses).
/// Writes in large transactions with cached statements, so a 100,000-order shop seeds in seconds.
struct Seeder {
    let options: SeedOptions
    private var rng: SplitMix64

    init(options: SeedOptions) {
        self.options = options
        rng = SplitMix64(seed: options.seedValue)
    }

    static let firstNames = [
        "Ada", "Grace", "Alan", "Katherine", "Linus", "Margaret", "Tim", "Barbara", "Dennis",
        "Frances", "Ken", "Radia", "John", "Hedy", "Niklaus", "Sophie", "Chloé", "Zoë", "Mateo", "Aisha",
    ]
    static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Johnson", "Torvalds", "Hamilton", "Berners-Lee",
        "Liskov", "Ritchie", "Allen", "Thompson", "Perlman", "McCarthy", "Lamarr", "Wirth", "Wilson", "Dubois",
        "Müller", "García", "Khan",
    ]
    static let devices: [(type: String, brand: String, models: [String])] = [
        ("phone", "Apple", ["iPhone 12", "iPhone 13", "iPhone 14 Pro", "iPhone 15"]),
        ("phone", "Samsung", ["Galaxy S21", "Galaxy S23", "Galaxy A54"]),
        ("phone", "Google", ["Pixel 7", "Pixel 8"]),
        ("tablet", "Apple", ["iPad Air", "iPad 10th gen"]),
        ("laptop", "Lenovo", ["ThinkPad T14", "IdeaPad 5"]),
        ("laptop", "Apple", ["MacBook Air M2", "MacBook Pro 14"]),
        ("console", "Nintendo", ["Switch", "Switch OLED"]),
    ]
    static let issues = [
        "Cracked screen", "Battery drains fast", "Won't charge", "Water damage", "No sound",
        "Camera blurry", "Keyboard keys stuck", "Overheats", "Won't turn on", "Joy-Con drift",
    ]
    static let subjects = [
        "Is my repair ready?", "Quote question", "Invoice request", "Collection time",
        "Warranty claim", "Où est mon téléphone ?", "Can you add a screen protector?", "Price match",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }
    mutating func money(cents range: ClosedRange<Int>) -> Money { Money(Decimal(int(range)) / 100) }
    mutating func past(days: Int) -> Timestamp {
        options.anchor.adding(milliseconds: -Int64(int(0...(days * 86_400_000))))
    }
    mutating func uuid() -> String {
        let a = rng.next()
        let b = rng.next()
        let hex = String(format: "%016llX%016llX", a, b)
        let chars = Array(hex)
        return "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-"
            + "A\(String(chars[17..<20]))-\(String(chars[20..<32]))"
    }

    /// The staff and the shop's locations: the server's own directory (new orders take their names from it).
    static let users = [("usr_1", "Grace (front desk)"), ("usr_2", "Linus (bench)"), ("usr_3", "Radia (bench)")]
    static let locations = [("loc_1", "High Street"), ("loc_2", "Station Road")]

    mutating func run(into store: BackendStore) throws {
        var clientNames: [(first: String, last: String, email: String)] = []
        var orderRefs: [(id: String, number: Int, clientIndex: Int, status: OrderStatus, created: Timestamp)] = []
        let users = Self.users
        let locations = Self.locations

        var clients: [Client] = []
        for n in 1...options.clients {
            let first = pick(Self.firstNames)
            let last = pick(Self.lastNames)
            let email = "\(first.lowercased()).\(last.lowercased())\(n)@example.com"
                .folding(options: .diacriticInsensitive, locale: nil)
            clientNames.append((first, last, email))
            let created = past(days: 730)
            clients.append(
                Client(
                    id: "cli_\(n)", email: email, firstName: first, lastName: last,
                    phone: chance(0.8) ? "+44 7700 \(int(100_000...999_999))" : nil,
                    company: chance(0.1) ? "\(last) & Co" : nil, address: "\(int(1...200)) High Street",
                    city: pick(["London", "Leeds", "Bristol", "York"]), postcode: "AB\(int(1...99)) \(int(1...9))CD",
                    notes: nil, orderCount: 0, totalSpent: .zero, createdAt: created, updatedAt: created, version: 1))
        }

        var orders: [Order] = []
        for n in 1...max(1, options.orders) {
            let clientIndex = int(0...(clients.count - 1))
            let status: OrderStatus = pick([
                .bookedIn, .inProgress, .awaitingParts, .ready, .collected, .collected,
                .collected, .cancelled,
            ])
            let total = money(cents: 1_999...149_999)
            let deposit: Money? = chance(0.4) ? money(cents: 0...1_999) : nil
            let balance = status == .collected ? Money.zero : total - (deposit ?? .zero)
            let created = past(days: 365)
            let user = pick(users)
            let location = pick(locations)
            let client = clientNames[clientIndex]
            orderRefs.append(("ord_\(n)", 1000 + n, clientIndex, status, created))
            orders.append(
                Order(
                    id: "ord_\(n)", orderNumber: 1000 + n, status: status, total: total, deposit: deposit,
                    balance: balance, notes: chance(0.3) ? pick(Self.issues) + " — customer informed" : nil,
                    clientId: "cli_\(clientIndex + 1)", clientName: "\(client.first) \(client.last)",
                    clientEmail: client.email, clientPhone: clients[clientIndex].phone, locationId: location.0,
                    locationName: location.1, assignedUserId: user.0, assignedUserName: user.1,
                    deviceCount: n % 2 == 0 ? 2 : 1, createdAt: created, updatedAt: created, version: 1))
            clients[clientIndex].orderCount += 1
            clients[clientIndex].totalSpent = clients[clientIndex].totalSpent + total
        }

        var devices: [Device] = []
        for (index, order) in orderRefs.enumerated() {
            for _ in 0..<(index % 2 == 1 ? 2 : 1) where devices.count < options.devices {
                let kind = pick(Self.devices)
                let status: DeviceStatus =
                    order.status == .collected
                    ? .collected
                    : pick([
                        .bookedIn, .diagnosing, .awaitingApproval, .approved, .inRepair, .awaitingParts,
                        .repaired, .qualityCheck, .ready,
                    ])
                devices.append(
                    Device(
                        id: "dev_\(devices.count + 1)", orderId: order.id, type: kind.type, brand: kind.brand,
                        model: pick(kind.models), serial: "SN\(int(10_000_000...99_999_999))",
                        imei: kind.type == "phone" ? "35\(int(1_000_000...9_999_999))\(int(100_000...999_999))" : nil,
                        passcode: chance(0.5) ? String(int(1000...999_999)) : nil, status: status,
                        issue: pick(Self.issues), diagnosis: chance(0.5) ? "Confirmed: " + pick(Self.issues) : nil,
                        resolution: status == .collected ? "Repaired and tested" : nil,
                        price: chance(0.7) ? money(cents: 2_999...59_999) : nil, assignedUserId: pick(users).0,
                        createdAt: order.created, updatedAt: order.created, version: 1))
            }
        }

        var tickets: [Ticket] = []
        var messages: [TicketMessage] = []
        for n in 1...options.tickets {
            let order = chance(0.6) ? orderRefs[int(0...(orderRefs.count - 1))] : nil
            let clientIndex = order?.clientIndex ?? int(0...(clients.count - 1))
            let client = clientNames[clientIndex]
            let created = past(days: 365)
            var last = created
            for m in 0..<options.messagesPerTicket {
                last = last.adding(milliseconds: Int64(int(60_000...86_400_000)))
                let fromStaff = m % 2 == 1
                messages.append(
                    TicketMessage(
                        id: uuid(), ticketId: "tkt_\(n)",
                        content: fromStaff ? "Thanks — we'll update you shortly." : pick(Self.subjects),
                        senderType: fromStaff ? .staff : .client,
                        senderName: fromStaff ? pick(users).1 : "\(client.first) \(client.last)",
                        senderId: fromStaff ? pick(users).0 : "cli_\(clientIndex + 1)",
                        isInternal: fromStaff && chance(0.1), createdAt: last, updatedAt: last, version: 1))
            }
            let assigned = chance(0.7) ? pick(users) : nil
            tickets.append(
                Ticket(
                    id: "tkt_\(n)", ticketNumber: 5000 + n, subject: pick(Self.subjects),
                    status: pick([.open, .pending, .closed, .closed]), priority: pick(["low", "normal", "high"]),
                    clientId: "cli_\(clientIndex + 1)", clientEmail: client.email,
                    clientName: "\(client.first) \(client.last)", assignedUserId: assigned?.0,
                    assignedUserName: assigned?.1, orderId: order?.id, orderRef: order.map { "#\($0.number)" },
                    messageCount: options.messagesPerTicket, lastMessageAt: last, createdAt: created,
                    updatedAt: last, version: 1))
        }

        try write(clients, to: store)
        try write(orders, to: store)
        try write(devices, to: store)
        try write(tickets, to: store)
        try write(messages, to: store)
    }

    private func write<R: StoredRecord>(_ records: [R], to store: BackendStore) throws {
        for chunk in stride(from: 0, to: records.count, by: 20_000) {
            try store.pool.write { db in
                var seq = try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seq'") ?? 0
                for record in records[chunk..<min(chunk + 20_000, records.count)] {
                    seq += 1
                    try store.save(record, db, sequence: seq)
                }
                try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'seq'", arguments: [seq])
            }
        }
    }
}
