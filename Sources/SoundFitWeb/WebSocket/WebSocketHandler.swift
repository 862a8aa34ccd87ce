import Foundation
import NIOCore
import NIOWebSocket
import OSCCore
import SoundFitJSON
import SoundFitOSC

/// One WebSocket connection of the OSCQuery server. Binary frames are OSC packets for the
/// surface (`WebSocketOSCTransport`); text frames are OSCQuery commands, JSON
/// `{"COMMAND": "LISTEN" | "IGNORE", "DATA": "/filter/cutoff"}` (a parameter, or a meter node:
/// its stream, as binary OSC, ends with IGNORE or the socket). A text frame that is not such a
/// command, or names a path that is not a parameter, is answered with a JSON text frame
/// `{"COMMAND": "ERROR", "DATA": "reason"}` and changes nothing.
///
/// Bounds: messages over `WebLimits.maximumFrameBytes` close the socket with 1009 (NIO's
/// decoder and the fragment aggregator); unknown opcodes and protocol errors with 1002 (unmasked
/// frames and RSV bits never get here: `WebSocketFrameValidator`); a
/// socket silent for two ping intervals is closed; a reader that lets more than
/// `maximumQueuedBytes` pile up is closed.
///
/// Thread rules: the connection's event loop only.
final class WebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let peer: OSCPeer
    private let transport: WebSocketOSCTransport
    private let listens: WebSocketListens
    private let namespace: OSCQueryNamespace
    /// Closes a client causes are logged here, rate limited (a client can cause them at any rate).
    private let refusals: RateLimitedLog<String>
    private var awaitingPong = false
    private var closing = false

    init(peer: OSCPeer, transport: WebSocketOSCTransport, listens: WebSocketListens, namespace: OSCQueryNamespace,
         refusals: RateLimitedLog<String>) {
        self.peer = peer
        self.transport = transport
        self.listens = listens
        self.namespace = namespace
        self.refusals = refusals
    }

    func handlerAdded(context: ChannelHandlerContext) {
        transport.connected(peer, channel: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        listens.remove(peer)
        transport.disconnected(peer)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        awaitingPong = false
        switch frame.opcode {
        case .binary:
            let packet = Array(buffer: frame.unmaskedData)
            if !transport.received(packet, from: peer) {
                sendError("SoundFit is starting; OSC over this socket is answered once it is ready", context: context)
            }
        case .text:
            command(String(buffer: frame.unmaskedData), context: context)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)),
                                  promise: nil)
        case .pong:
            break
        case .connectionClose:
            close(.normalClosure, context: context)
        default:
            close(.protocolError, context: context)
        }
    }

    /// A LISTEN or IGNORE command.
    private func command(_ text: String, context: ChannelHandlerContext) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Data(text.utf8))
        } catch {
            sendError("text frames are OSCQuery commands in JSON, {\"COMMAND\": \"LISTEN\", \"DATA\": \"/path\"}: \(error)",
                      context: context)
            return
        }
        guard case .object(let object) = value, case .string(let command)? = object["COMMAND"] else {
            sendError("a command is a JSON object with a string COMMAND (LISTEN or IGNORE) and DATA", context: context)
            return
        }
        guard case .string(let path)? = object["DATA"] else {
            sendError("\(command): DATA must be the path of a parameter, as a string", context: context)
            return
        }
        switch command {
        case "LISTEN" where namespace.meterNodes.isMeter(path):
            if let refusal = namespace.meterNodes.follow(path, for: OSCSender(peer: peer, transport: transport)) {
                sendError("LISTEN \(path): \(refusal)", context: context)
            }
        case "IGNORE" where namespace.meterNodes.isMeter(path):
            namespace.meterNodes.unfollow(path, for: OSCSender(peer: peer, transport: transport))
        case "LISTEN":
            guard namespace.isParameter(path) else {
                sendError("LISTEN \(path): not a parameter of the namespace (GET / lists them)", context: context)
                return
            }
            listens.listen(peer, to: path)
        case "IGNORE":
            guard namespace.isParameter(path) else {
                sendError("IGNORE \(path): not a parameter of the namespace", context: context)
                return
            }
            listens.ignore(peer, path)
        default:
            sendError("unknown COMMAND '\(command)': this server takes LISTEN and IGNORE", context: context)
        }
    }

    private func sendError(_ reason: String, context: ChannelHandlerContext) {
        let json = JSONValue.object(JSONObject(["COMMAND": .string("ERROR"), "DATA": .string(reason)]))
        var buffer = context.channel.allocator.buffer(capacity: 128)
        buffer.writeBytes(json.compactData())
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: buffer)), promise: nil)
    }

    /// Sends a close frame with `code` and closes the connection once it is written.
    private func close(_ code: WebSocketErrorCode, context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        var buffer = context.channel.allocator.buffer(capacity: 2)
        buffer.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// Pings a silent socket; one that stayed silent since the last ping is closed.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if awaitingPong {
            refusals.log("websocket silent", "closed the silent WebSocket of \(peer)")
            close(.goingAway, context: context)
        } else {
            awaitingPong = true
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())), promise: nil)
        }
    }

    /// A client that does not read its answers: closed once its queue passes the bound.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable {
            refusals.log("websocket queue", "closed the WebSocket of \(peer): it does not read what it is sent (queue over its bound)")
            context.close(promise: nil)
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let aggregation = error as? NIOWebSocketFrameAggregator.Error {
            refusals.log("websocket error", "WebSocket of \(peer): \(aggregation)")
            close(aggregation == .accumulatedFrameSizeIsTooLarge ? .messageTooLarge : .protocolError, context: context)
        } else {
            refusals.log("websocket error", "WebSocket of \(peer): \(error)")
            close(.protocolError, context: context)
        }
    }
}
