import Foundation
import NIOCore
import NIOWebSocket
import OSCCore
import SoundFitJSON
import SoundFitOSC
import Synchronization

/// OSC over WebSocket: each WebSocket connection of the web server is one more peer of the OSC
/// surface, with its own `OSCSender` identity (its address and port). Binary frames it sends
/// go through the same ingress and dispatch as UDP and TCP; every answer (`/state`, `/error`,
/// query answers, `/list`, subscription feedback) goes back over the socket as one binary
/// frame per packet.
///
/// Thread rules: `send` from any thread except the JACK process callback (the frame is written
/// on the connection's event loop); packets are delivered on the event loop, in arrival order
/// per connection.
public final class WebSocketOSCTransport: OSCConnectionTransport {
    public let name = "ws"
    public let urlScheme = "osc.ws"
    public let isConnectionOriented = true

    private struct Receiver: Sendable {
        let maximumPacketBytes: Int
        let onPacket: @Sendable ([UInt8], OSCPeer) -> Void
        let onOversized: @Sendable (Int, OSCPeer) -> Void
        let onDisconnected: @Sendable (OSCPeer) -> Void
    }

    private let channels = Mutex<[OSCPeer: any Channel]>([:])
    private let receiver = Mutex<Receiver?>(nil)

    public init() {}

    /// WebSocket connections open now.
    public var connectionCount: Int { channels.withLock { $0.count } }

    @discardableResult
    public func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        guard let channel = channels.withLock({ $0[peer] }), channel.isActive else { return false }
        var buffer = channel.allocator.buffer(capacity: packet.count)
        buffer.writeBytes(packet)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .binary, data: buffer), promise: nil)
        return true
    }

    /// Sends `text` (an OSCQuery notification such as `PATH_CHANGED`) to every open WebSocket as
    /// one text frame each. Any thread except the JACK process callback.
    func sendToAll(text: JSONValue) {
        let bytes = text.compactData()
        for channel in channels.withLock({ Array($0.values) }) where channel.isActive {
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
        }
    }

    /// Nothing sent over a WebSocket can arrive at SoundFit itself.
    public func isOwnEndpoint(_ peer: OSCPeer) -> Bool { false }


    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void,
                               onDisconnected: @escaping @Sendable (OSCPeer) -> Void) {
        receiver.withLock {
            $0 = Receiver(maximumPacketBytes: maximumPacketBytes, onPacket: onPacket, onOversized: onOversized,
                          onDisconnected: onDisconnected)
        }
    }

    /// A WebSocket was opened (on its event loop).
    func connected(_ peer: OSCPeer, channel: any Channel) {
        channels.withLock { $0[peer] = channel }
    }

    /// A binary frame from `peer`: one OSC packet for the surface. Returns false when the surface
    /// is not listening yet (SoundFit is still starting).
    func received(_ packet: [UInt8], from peer: OSCPeer) -> Bool {
        guard let receiver = receiver.withLock({ $0 }) else { return false }
        if packet.count > receiver.maximumPacketBytes {
            receiver.onOversized(packet.count, peer)
        } else {
            receiver.onPacket(packet, peer)
        }
        return true
    }

    /// The WebSocket of `peer` closed: its subscription ends.
    func disconnected(_ peer: OSCPeer) {
        channels.withLock { $0[peer] = nil }
        receiver.withLock { $0 }?.onDisconnected(peer)
    }
}
