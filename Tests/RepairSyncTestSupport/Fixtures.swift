public import Foundation

/// Server-shaped JSON for each record type, with the awkward cases in them: exact decimals that a Double would
/// round, a status this version does not know, nulls, non-ASCII text.
public enum Fixtures {
    public static let order = #"""
        {"id":"ord_1","order_number":1042,"status":"booked_in","total":"1234567.89","deposit":"0.1",
         "balance":"1234567.79","notes":"Cracked screen — customer waits","client_id":"cli_1",
         "client_name":"Ada Lovelace","client_email":"ada@example.com","client_phone":"+44 20 7946 0000",
         "location_id":"loc_1","location_name":"High Street","assigned_user_id":"usr_1",
         "assigned_user_name":"Grace","device_count":2,"created_at":"2026-11-20T09:00:00.000Z",
         "updated_at":"2026-11-21T17:45:12.345Z","version":7}
        """#

    /// An order whose status a newer server added, with no money and no optional fields.
    public static let orderWithUnknownStatus = #"""
        {"id":"ord_2","order_number":1043,"status":"on_hold_for_insurance","total":null,"deposit":null,
         "balance":null,"notes":null,"client_id":"cli_1","client_name":null,"client_email":null,
         "client_phone":null,"location_id":null,"location_name":null,"assigned_user_id":null,
         "assigned_user_name":null,"device_count":null,"created_at":"2026-11-20T09:00:00.000Z",
         "updated_at":"2026-11-20T09:00:00.000Z","version":1}
        """#

    public static let device = #"""
        {"id":"dev_1","order_id":"ord_1","type":"phone","brand":"Apple","model":"iPhone 13","serial":"F2LXK",
         "imei":"356789104512345","passcode":"1234","status":"awaiting_approval","issue":"Screen",
         "diagnosis":"LCD cracked","resolution":null,"price":"0.3","assigned_user_id":"usr_1",
         "created_at":"2026-11-20T09:00:00.000Z","updated_at":"2026-11-21T10:00:00.001Z","version":3}
        """#

    public static let deviceWithUnknownStatus = #"""
        {"id":"dev_2","order_id":"ord_1","type":"tablet","brand":null,"model":null,"serial":null,"imei":null,
         "passcode":null,"status":"sent_to_manufacturer","issue":null,"diagnosis":null,"resolution":null,
         "price":null,"assigned_user_id":null,"created_at":"2026-11-20T09:00:00.000Z",
         "updated_at":"2026-11-20T09:00:00.000Z","version":1}
        """#

    public static let client = #"""
        {"id":"cli_1","email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","phone":null,
         "company":"Analytical Engines Ltd","address":"12 Marylebone Rd","city":"London","postcode":"NW1 5LR",
         "notes":null,"order_count":12,"total_spent":"99999999999999999.99",
         "created_at":"2019-01-01T00:00:00.000Z","updated_at":"2026-11-21T08:00:00.000Z","version":40}
        """#

    public static let ticket = #"""
        {"id":"tkt_1","ticket_number":501,"subject":"Où est mon téléphone ?","status":"pending","priority":"high",
         "client_id":"cli_1","client_email":"ada@example.com","client_name":"Ada Lovelace",
         "assigned_user_id":"usr_1","assigned_user_name":"Grace","order_id":"ord_1","order_ref":"#1042",
         "message_count":3,"last_message_at":"2026-11-21T12:00:00.000Z","created_at":"2026-11-20T09:00:00.000Z",
         "updated_at":"2026-11-21T12:00:00.000Z","version":5}
        """#

    public static let ticketWithUnknownStatus = #"""
        {"id":"tkt_2","ticket_number":502,"subject":"Invoice","status":"escalated","priority":null,
         "client_id":null,"client_email":"bob@example.com","client_name":null,"assigned_user_id":null,
         "assigned_user_name":null,"order_id":null,"order_ref":null,"message_count":null,"last_message_at":null,
         "created_at":"2026-11-20T09:00:00.000Z","updated_at":"2026-11-20T09:00:00.000Z","version":1}
        """#

    public static let ticketMessage = #"""
        {"id":"8F0E2C52-2B0B-4F4B-9E0E-3A4C9D1B2F10","ticket_id":"tkt_1","content":"Ready tomorrow 👍",
         "sender_type":"staff","sender_name":"Grace","sender_id":"usr_1","is_internal":false,
         "created_at":"2026-11-21T12:00:00.000Z","updated_at":"2026-11-21T12:00:00.000Z","version":1}
        """#

    public static let ticketMessageFromUnknownSender = #"""
        {"id":"msg_2","ticket_id":"tkt_1","content":"auto-reply","sender_type":"system","sender_name":null,
         "sender_id":null,"is_internal":true,"created_at":"2026-11-21T12:00:01.000Z",
         "updated_at":"2026-11-21T12:00:01.000Z","version":1}
        """#

    public static let dashboardStats = #"""
        {"period":"week",
         "devices":{"current":42,"comparisons":[{"period":"last_week","count":38,"change":4,"change_percent":10.53}]},
         "revenue":{"current":"5120.5","comparisons":[{"period":"last_week","total":"4800","change":"320.5",
                    "change_percent":6.68}]},
         "clients":{"current":30,"comparisons":[]},
         "new_clients":{"current":5,"comparisons":[{"period":"last_week","count":0,"change":5,"change_percent":null}]},
         "returning_clients":{"current":25,"comparisons":[]}}
        """#

    /// Parses JSON text into Foundation objects, so that two documents can be compared regardless of key order
    /// and whitespace.
    public static func jsonObject(_ text: String) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as! NSObject
    }

    public static func jsonObject(_ data: Data) throws -> NSObject {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as! NSObject
    }
}
