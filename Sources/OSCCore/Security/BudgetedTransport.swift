import Synchronization

/// A transport whose sends draw on `SourceBudgets`: what SoundFit sends to an address beyond
/// its budget is dropped (the send reports failure), counted, and logged at most a few times
/// per interval. The surface wraps its transport in one when it listens beyond loopback
/// (`OSCExposure.network`); on loopback replies are never limited.
///
/// It also keeps which addresses confirmed they receive there (`SourceConfirmations`): every
/// packet received earns its source `SourceBudgets.answerRatio` times its bytes of answers,
/// and an unconfirmed source gets no more than that. 127.0.0.1 counts as confirmed: the kernel
/// never accepts it as a source from the network, and it is where this host's own tools send
/// from (the rest of 127.0.0.0/8 is treated like any host, so one machine can test the rules).
///
/// Thread rules: any thread except the JACK process callback; the lock covers the budget
/// bookkeeping only, never the send.
public final class BudgetedTransport: OSCTransport {
    public let base: any OSCTransport
    private let bytesPerSecond: Int
    private let budgets: Mutex<SourceBudgets>
    private let now: @Sendable () -> Duration
    private let drops: RateLimitedLog<String>
    private let confirmations = Mutex(SourceConfirmations())

    public init(_ base: any OSCTransport, budgets: SourceBudgets = SourceBudgets(),
         log: @escaping @Sendable (String) -> Void) {
        self.base = base
        bytesPerSecond = budgets.bytesPerSecond
        self.budgets = Mutex(budgets)
        let clock = ContinuousClock()
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        drops = RateLimitedLog(emit: log)
    }

    public var name: String { base.name }

    @discardableResult
    public func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        send(packet, to: peer, confirmed: isConfirmed(peer.address))
    }

    /// Sends a packet whose amount is bounded by its own rules (a subscription's challenge: one
    /// per pending target), to a source that may not have sent anything: within the rate budget
    /// only.
    @discardableResult
    public func sendOutsideRatio(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        send(packet, to: peer, confirmed: true)
    }

    private func send(_ packet: [UInt8], to peer: OSCPeer, confirmed: Bool) -> Bool {
        let time = now()
        switch budgets.withLock({ $0.spend(packet.count, to: peer.address, at: time, confirmed: confirmed) }) {
        case .allowed:
            return base.send(packet, to: peer)
        case .overBudget:
            drops.log("budget \(peer.host)", "dropped answers to \(peer.host): over its budget of "
                + "\(bytesPerSecond) bytes/s (a forged source, or a client asking too much)")
        case .overRatio:
            drops.log("ratio", "dropped answers to \(peer.host): more than \(SourceBudgets.answerRatio)× what it "
                + "sent, and it has not confirmed its address (/source/confirm)")
        }
        return false
    }

    /// Every packet received earns its source answers (and keeps a confirmed one confirmed).
    public func startReceiving(maximumPacketBytes: Int,
                        onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                        onOversized: @escaping @Sendable (Int, OSCPeer) -> Void) {
        base.startReceiving(maximumPacketBytes: maximumPacketBytes, onPacket: { [self] bytes, peer in
            let time = now()
            budgets.withLock { $0.received(bytes.count, from: peer.address, at: time) }
            confirmations.withLock { $0.heard(from: peer.address, at: time) }
            onPacket(bytes, peer)
        }, onOversized: onOversized)
    }

    /// Whether `address` (network byte order) confirmed it receives here, or is 127.0.0.1.
    public func isConfirmed(_ address: UInt32) -> Bool {
        guard UInt32(bigEndian: address) != 0x7F00_0001 else { return true }
        let time = now()
        return confirmations.withLock { $0.isConfirmed(address, at: time) }
    }

    /// The token `peer`'s address echoes to confirm itself.
    public func confirmationToken(for peer: OSCPeer) -> String {
        let time = now()
        return confirmations.withLock { $0.token(for: peer.address, at: time) }
    }

    /// Confirms `peer`'s address when `token` is its token; false when it is not.
    public func confirm(_ token: String, from peer: OSCPeer) -> Bool {
        let time = now()
        return confirmations.withLock { $0.confirm(token, from: peer.address, at: time) }
    }

    /// Confirms `address`: it echoed the token of a subscription's challenge.
    public func confirm(_ address: UInt32) {
        let time = now()
        confirmations.withLock { $0.confirm(address, at: time) }
    }

    public func isOwnEndpoint(_ peer: OSCPeer) -> Bool { base.isOwnEndpoint(peer) }

    public func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void) {
        base.reportUnreachable(to: handler)
    }

    /// Datagrams dropped for being over budget (or over the ratio), and the addresses tracked.
    public var droppedCount: Int { budgets.withLock { $0.droppedCount } }
    public var droppedForRatioCount: Int { budgets.withLock { $0.droppedForRatioCount } }
    public var confirmedSourceCount: Int { confirmations.withLock { $0.confirmedCount } }
    public var trackedSourceCount: Int { budgets.withLock { $0.trackedSourceCount } }

    /// Writes the counts of drop lines held back in ended windows.
    public func flushSuppressedLogLines() { drops.flushSuppressed() }
}

/// Whether SoundFit's OSC port can be reached from beyond this host, which decides whether
/// answers are budgeted per source address.
public enum OSCExposure: Sendable, Equatable {
    /// Listening on a loopback address (127.0.0.1, localhost): only local processes reach it,
    /// and forging a source takes root on this host. Replies are never limited.
    case loopback
    /// Listening on any other address (0.0.0.0, a LAN address): a datagram's source can be
    /// forged by anyone on the path, so what each source address can draw is budgeted.
    case network

    /// `loopback` for 127.0.0.1 and localhost, `network` for anything else (0.0.0.0 too;
    /// and, deliberately, 127.0.0.2…: so a test can exercise the network rules on one host).
    public init(listeningOn host: String) {
        self = ["127.0.0.1", "localhost"].contains(host) ? .loopback : .network
    }
}
