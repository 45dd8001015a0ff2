internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import NIOHTTPTypes
internal import RepairSyncModels

/// The server's clock as clients see it: `Date` headers and `Retry-After` dates in IMF-fixdate, moved by the fault
/// plan's `clock_skew_ms` (a server whose clock is off).
enum ServerClock {
    static func httpDate(_ date: Date) -> String { Timestamp(date).httpDate }
}

/// Rewrites the `Date` header of every response to the server's (possibly skewed) clock. Hummingbird sets `Date`
/// after the responder runs, so this is done on the channel, after it.
final class ServerClockHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let injector: FaultInjector

    init(injector: FaultInjector) { self.injector = injector }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var part = unwrapOutboundIn(data)
        if case .head(var head) = part, injector.clockSkewMilliseconds != 0 {
            head.headerFields[.date] = ServerClock.httpDate(injector.serverNow)
            part = .head(head)
        }
        context.write(wrapOutboundOut(part), promise: promise)
    }
}
