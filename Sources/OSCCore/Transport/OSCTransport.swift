/// Carries OSC packets between SoundFit and its peers: the UDP socket (`OSCSocket`) and OSC
/// over TCP (`OSCTCPListener`, a peer per connection) and binary OSC over WebSocket
/// (`WebSocketOSCTransport`, in SoundFitWeb). The surface only talks to this protocol, so an
/// in-memory transport drives it in unit tests.
///
/// Thread rules: `send` and `isOwnEndpoint` may be called from any thread except the JACK
/// process callback. `startReceiving` hands packets to `onPacket` one at a time, in arrival
/// order, on the transport's own receive thread (the in-memory transport: the caller's).
public protocol OSCTransport: AnyObject, Sendable {
    /// A short name for logs: `udp`, `tcp`, `memory`, …
    var name: String { get }

    /// The scheme of a peer's liblo-style URL over this transport: `osc.udp`, `osc.tcp`.
    var urlScheme: String { get }

    /// Whether each peer is a connection (TCP): its packets cannot come from a forged address,
    /// and it is gone when the connection closes.
    var isConnectionOriented: Bool { get }

    /// Sends one packet to `peer`; false if it could not be handed to the network.
    @discardableResult
    func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool

    /// Starts delivering received packets. Packets over `maximumPacketBytes` are reported
    /// through `onOversized` and dropped.
    func startReceiving(maximumPacketBytes: Int,
                        onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                        onOversized: @escaping @Sendable (Int, OSCPeer) -> Void)

    /// `startReceiving`, and `onDisconnected` hears when a peer of a connection-oriented
    /// transport is gone (its connection closed): nothing can be sent to it any more.
    func startReceiving(maximumPacketBytes: Int,
                        onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                        onOversized: @escaping @Sendable (Int, OSCPeer) -> Void,
                        onDisconnected: @escaping @Sendable (OSCPeer) -> Void)

    /// Whether packets sent to `peer` would arrive at this transport itself. SoundFit never
    /// answers such a source nor sends feedback there: a server answering itself never stops.
    func isOwnEndpoint(_ peer: OSCPeer) -> Bool

    /// Calls `handler` (on the receive thread) with each peer a sent packet turned out to be
    /// unreachable for (ICMP port unreachable): nobody listens there. Transports that cannot
    /// tell never call it.
    func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void)
}

extension OSCTransport {
    public func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void) {}
}

/// The closure a transport calls with unreachable peers. Kept in a struct: a bare closure in a
/// `Mutex` is re-wrapped in a reabstraction thunk at every `withLock`, so each call would go
/// through one more thunk than the last (found as a receive thread spinning in thunks).
struct UnreachableHandler: Sendable {
    let report: @Sendable (OSCPeer) -> Void
}

extension OSCTransport {
    public var urlScheme: String { "osc.udp" }
    public var isConnectionOriented: Bool { false }

    /// Datagram transports have no connections: no peer is ever gone.
    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void,
                               onDisconnected: @escaping @Sendable (OSCPeer) -> Void) {
        startReceiving(maximumPacketBytes: maximumPacketBytes, onPacket: onPacket, onOversized: onOversized)
    }

    /// `peer`'s URL over this transport: `osc.udp://127.0.0.1:9000/`.
    public func url(of peer: OSCPeer) -> String { "\(urlScheme)://\(peer.host):\(peer.port)/" }
}

/// A transport whose peers are connections (OSC over TCP, over WebSocket): it implements
/// `startReceiving` with `onDisconnected`; receiving without it hears of no closed connection.
public protocol OSCConnectionTransport: OSCTransport {}

extension OSCConnectionTransport {
    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void) {
        startReceiving(maximumPacketBytes: maximumPacketBytes, onPacket: onPacket, onOversized: onOversized,
                       onDisconnected: { _ in })
    }
}
