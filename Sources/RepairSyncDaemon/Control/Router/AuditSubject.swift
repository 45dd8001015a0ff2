internal import RepairSyncProtocol

/// What a change is about, for the log line every change writes (`id=…`): the record, ticket or change number.
protocol AuditSubject {
    var auditSubject: String { get }
}

extension RPC.QueueChange.Params: AuditSubject { var auditSubject: String { id } }
extension RPC.UpdateOrder.Params: AuditSubject { var auditSubject: String { id } }
extension RPC.UpdateDevice.Params: AuditSubject { var auditSubject: String { id } }
extension RPC.ReplyToTicket.Params: AuditSubject { var auditSubject: String { ticketId } }
extension RPC.ResolveConflict.Params: AuditSubject { var auditSubject: String { String(id) } }
extension RPC.Discard.Params: AuditSubject { var auditSubject: String { String(seq) } }
extension RPC.Retry.Params: AuditSubject {
    var auditSubject: String { ids.map { $0.map(String.init).joined(separator: ",") } ?? "all dead" }
}
extension RPC.CreateClient.Params: AuditSubject { var auditSubject: String { id ?? "new client" } }
extension RPC.CreateOrder.Params: AuditSubject { var auditSubject: String { "client \(clientId)" } }
extension RPC.CreateDevice.Params: AuditSubject { var auditSubject: String { "order \(orderId)" } }
