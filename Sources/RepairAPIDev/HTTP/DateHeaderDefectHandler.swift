internal import HTTPTypes
internal import NIOCore
internal import NIOHTTPTypes

/// The `drop_date_header` defect: removes `Date` from response heads. It sits in the channel pipeline (Hummingbird
/// adds `Date` after the router and its middleware have answered) and passes everything through untouched while the
/// defect is off.
final class DateHeaderDefectHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let defects: DefectSwitches

    init(defects: DefectSwitches) {
        self.defects = defects
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        guard case .head(var head) = part, defects.isOn(.dropDateHeader) else {
            context.write(data, promise: promise)
            return
        }
        head.headerFields[.date] = nil
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
