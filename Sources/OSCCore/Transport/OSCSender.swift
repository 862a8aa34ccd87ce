/// Who sent a request: the peer and the transport it came over. Replies go back over that
/// same transport, so a request that arrived over TCP is never answered over UDP.
public struct OSCSender: Sendable, Hashable, CustomStringConvertible {
    public let peer: OSCPeer
    public let transport: any OSCTransport

    public init(peer: OSCPeer, transport: any OSCTransport) {
        self.peer = peer
        self.transport = transport
    }

    /// Sends `message` to the sender over its transport; false if it could not be sent.
    @discardableResult
    public func send(_ message: OSCMessage) -> Bool {
        transport.send(OSCCodec.encode(message), to: peer)
    }

    public static func == (lhs: OSCSender, rhs: OSCSender) -> Bool {
        lhs.peer == rhs.peer && lhs.transport === rhs.transport
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(peer)
        hasher.combine(ObjectIdentifier(transport))
    }

    /// The peer, as log lines name it (`127.0.0.1:9000`).
    public var description: String { peer.description }
}
