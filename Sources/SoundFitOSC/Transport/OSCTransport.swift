/// Carries OSC packets between SoundFit and its peers: the UDP socket today; OSC over TCP
/// (SLIP) and binary OSC over WebSocket follow the same contract. The surface only talks to
/// this protocol, so an in-memory transport drives it in unit tests.
///
/// Thread rules: `send` and `isOwnEndpoint` may be called from any thread except the JACK
/// process callback. `startReceiving` hands packets to `onPacket` one at a time, in arrival
/// order, on the transport's own receive thread (the in-memory transport: the caller's).
public protocol OSCTransport: AnyObject, Sendable {
    /// A short name for logs: `udp`, `memory`, …
    var name: String { get }

    /// Sends one packet to `peer`; false if it could not be handed to the network.
    @discardableResult
    func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool

    /// Starts delivering received packets. Packets over `maximumPacketBytes` are reported
    /// through `onOversized` and dropped.
    func startReceiving(maximumPacketBytes: Int,
                        onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                        onOversized: @escaping @Sendable (Int, OSCPeer) -> Void)

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
