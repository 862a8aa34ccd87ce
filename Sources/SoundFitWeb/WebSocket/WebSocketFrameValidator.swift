import NIOCore
import NIOWebSocket
import OSCCore
import SoundFitOSC

/// The RFC 6455 checks NIO's frame decoder leaves to the server, on each frame as it arrives
/// (before fragments are reassembled, which forgets both): a client frame must be masked
/// (section 5.1) and, with no extension negotiated, carry no RSV bit (section 5.2). Either
/// failure sends close 1002 (protocol error) and closes the connection; neither that frame nor
/// any after it reaches `WebSocketHandler`.
///
/// Thread rules: the connection's event loop only.
final class WebSocketFrameValidator: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let peer: OSCPeer
    private let refusals: RateLimitedLog<String>
    private var failed = false

    init(peer: OSCPeer, refusals: RateLimitedLog<String>) {
        self.peer = peer
        self.refusals = refusals
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        let problem: String? = if frame.maskKey == nil {
            "an unmasked frame (a client must mask every frame, RFC 6455 5.1)"
        } else if frame.rsv1 || frame.rsv2 || frame.rsv3 {
            "a frame with an RSV bit set and no extension negotiated (RFC 6455 5.2)"
        } else {
            nil
        }
        guard let problem else {
            context.fireChannelRead(data)
            return
        }
        failed = true
        refusals.log("websocket 1002", "closed the WebSocket of \(peer) with 1002: \(problem)")
        var code = context.channel.allocator.buffer(capacity: 2)
        code.write(webSocketErrorCode: .protocolError)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)))
            .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
