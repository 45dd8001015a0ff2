internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}

/// Thrown inside a response body writer to make the server drop the connection mid-body.
struct InjectedConnectionCut: Error {}

extension BackendReply {
    /// The HTTP response, damaged as the fault injector asked: `cut` sends the headers and half the body and
    /// drops the connection; `truncated` sends a complete response whose JSON stops halfway.
    func response(fault: FaultKind? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let etag { headers[.eTag] = "\"\(etag)\"" }
        if replayed { headers[.idempotentReplayed] = "true" }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        let status = HTTPResponse.Status(code: status)
        switch fault {
        case .cut?:
            let half = ByteBuffer(bytes: body.prefix(body.count / 2))
            return Response(
                status: status, headers: headers,
                body: ResponseBody(contentLength: body.count) { writer in
                    try await writer.write(half)
                    throw InjectedConnectionCut()
                })
        case .truncated?:
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.prefix(body.count / 2))))
        default:
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
