import Synchronization

/// An OSC transport without sockets, for unit tests (in the spirit of swift-nio's embedded
/// channel): `receive` delivers a packet on the caller's thread the way a socket's receive
/// thread would, and every packet the surface sends is kept, in order, for `readOutbound`.
///
/// Thread rules: every member may be called from any thread.
public final class InMemoryOSCTransport: OSCTransport {
    /// One packet the surface sent.
    public struct Outbound: Sendable, Equatable, CustomStringConvertible {
        public var peer: OSCPeer
        public var packet: [UInt8]

        /// The packet decoded (nil if it is not valid OSC).
        public var decoded: OSCPacket? { try? OSCCodec.decode(packet) }
        /// The packet's message, when it is a single message.
        public var message: OSCMessage? {
            if case .message(let message) = decoded { return message }
            return nil
        }

        public var description: String { "\(peer) \(message.map { "\($0)" } ?? "\(packet.count) bytes")" }
    }

    private struct Receiver {
        var maximumPacketBytes: Int
        var onPacket: @Sendable ([UInt8], OSCPeer) -> Void
        var onOversized: @Sendable (Int, OSCPeer) -> Void
    }

    public let name = "memory"
    /// The transport's own address: packets from it are the surface's own.
    public let endpoint: OSCPeer
    private let receiver = Mutex<Receiver?>(nil)
    private let outbound = Mutex<[Outbound]>([])
    private let refused = Mutex<Set<OSCPeer>>([])
    private let unreachableHandler = Mutex<UnreachableHandler?>(nil)

    public init(endpoint: OSCPeer = OSCPeer(address: UInt32(0x7F00_0001).bigEndian, port: 7700)) {
        self.endpoint = endpoint
    }

    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void) {
        receiver.withLock {
            $0 = Receiver(maximumPacketBytes: maximumPacketBytes, onPacket: onPacket, onOversized: onOversized)
        }
    }

    /// Whether a receiver has started (`startReceiving`).
    public var isReceiving: Bool { receiver.withLock { $0 != nil } }

    /// Delivers `packet` from `peer` to the receiver, on this thread; false if nobody receives yet.
    @discardableResult
    public func receive(_ packet: [UInt8], from peer: OSCPeer) -> Bool {
        guard let receiver = receiver.withLock({ $0 }) else { return false }
        if packet.count > receiver.maximumPacketBytes {
            receiver.onOversized(packet.count, peer)
        } else {
            receiver.onPacket(packet, peer)
        }
        return true
    }

    /// Delivers one message from `peer`.
    @discardableResult
    public func receive(_ message: OSCMessage, from peer: OSCPeer) -> Bool {
        receive(OSCCodec.encode(message), from: peer)
    }

    @discardableResult
    public func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        guard !refused.withLock({ $0.contains(peer) }) else { return false }
        outbound.withLock { $0.append(Outbound(peer: peer, packet: packet)) }
        return true
    }

    public func isOwnEndpoint(_ peer: OSCPeer) -> Bool { peer == endpoint }

    public func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void) {
        unreachableHandler.withLock { $0 = UnreachableHandler(report: handler) }
    }

    /// Reports `peer` unreachable, as an ICMP port unreachable would.
    public func portUnreachable(_ peer: OSCPeer) {
        unreachableHandler.withLock { $0 }?.report(peer)
    }

    /// Makes sends to `peer` fail (as an unreachable host would), or succeed again.
    public func refuseSends(to peer: OSCPeer, _ refuse: Bool = true) {
        refused.withLock { if refuse { $0.insert(peer) } else { $0.remove(peer) } }
    }

    /// The oldest packet sent and not yet read, if any.
    public func readOutbound() -> Outbound? {
        outbound.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// Every packet sent and not yet read.
    public func readAllOutbound() -> [Outbound] {
        outbound.withLock { packets in
            defer { packets.removeAll() }
            return packets
        }
    }

    /// Waits until a packet has been sent (replies from tasks arrive a little later), or until
    /// `timeout` has passed.
    public func nextOutbound(timeout: Duration = .seconds(5)) async -> Outbound? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let packet = readOutbound() { return packet }
            guard clock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
