internal import Foundation
internal import HTTPTypes
internal import Hummingbird

/// Records every authenticated write to `/api/v1` (PATCH, POST) in the write log, with the answer it got — injected
/// faults included, since it runs before the fault middleware.
struct WriteLogMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let log: WriteLog

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.hasPrefix("/api/v1/"), request.method == .patch || request.method == .post else {
            return try await next(request, context)
        }
        var request = request
        // Collected once here; the request passed on carries the collected body (a body over the limit is the
        // same 413 the route would have answered).
        let body = Data(try await request.collectBody(upTo: context.maxUploadSize).readableBytesView)
        var entry = WriteLog.Entry(
            method: request.method.rawValue, path: request.uri.path,
            idempotencyKey: request.headers[.idempotencyKey], ifMatch: request.headers[.ifMatch],
            body: try? JSONDecoder().decode(JSONValue.self, from: body), status: 0, replayed: false)
        do {
            let response = try await next(request, context)
            entry.status = Int(response.status.code)
            entry.replayed = response.headers[.idempotentReplayed] == "true"
            log.record(entry)
            return response
        } catch let error as any HTTPResponseError {
            entry.status = Int(error.status.code)
            log.record(entry)
            throw error
        }
    }
}
