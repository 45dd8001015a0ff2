internal import NIOCore

/// One frame of the newline-delimited protocol: a line (without its newline), or the news that a line exceeded
/// the limit (the connection is then answered once and closed; the rest of the line is never buffered).
enum ControlFrame: Sendable {
    case line(ByteBuffer)
    case tooLong
}

/// Splits the byte stream at `\n` (a preceding `\r` is dropped), buffering at most `maxLineBytes` of a line (and the
/// `\r` a client on CRLF line endings puts after it: the limit is the request's, whatever the line ending).
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlFrame

    let maxLineBytes: Int
    private var overflowed = false

    init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !overflowed else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            let carriageReturn = length > 0 && buffer.getInteger(at: newline - 1, as: UInt8.self) == UInt8(ascii: "\r")
            guard length - (carriageReturn ? 1 : 0) <= maxLineBytes else { return overflow(context, &buffer) }
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytesView.last == UInt8(ascii: "\r") {
                line = line.getSlice(at: line.readerIndex, length: line.readableBytes - 1)!
            }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        // One byte over the limit may still be the `\r` of a line of exactly the limit, its `\n` not read yet.
        let waiting = buffer.readableBytes
        if waiting > maxLineBytes + 1
            || (waiting == maxLineBytes + 1
                && buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) != UInt8(ascii: "\r"))
        {
            return overflow(context, &buffer)
        }
        return .needMoreData
    }

    private mutating func overflow(_ context: ChannelHandlerContext, _ buffer: inout ByteBuffer) -> DecodingState {
        overflowed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        context.fireChannelRead(wrapInboundOut(.tooLong))
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        // A last line without its newline is still a request.
        if try decode(context: context, buffer: &buffer) == .continue { return .continue }
        if !overflowed, buffer.readableBytes > 0, let rest = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(rest)))
        }
        return .needMoreData
    }
}
