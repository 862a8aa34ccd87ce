import Synchronization

/// A transport whose sends draw on `SourceBudgets`: what SoundFit sends to an address beyond
/// its budget is dropped (the send reports failure), counted, and logged at most a few times
/// per interval. The surface wraps its transport in one when it listens beyond loopback
/// (`OSCExposure.network`); on loopback replies are never limited.
///
/// Thread rules: any thread except the JACK process callback; the lock covers the budget
/// bookkeeping only, never the send.
final class BudgetedTransport: OSCTransport {
    let base: any OSCTransport
    private let bytesPerSecond: Int
    private let budgets: Mutex<SourceBudgets>
    private let now: @Sendable () -> Duration
    private let drops: RateLimitedLog<String>

    init(_ base: any OSCTransport, budgets: SourceBudgets = SourceBudgets(),
         log: @escaping @Sendable (String) -> Void) {
        self.base = base
        bytesPerSecond = budgets.bytesPerSecond
        self.budgets = Mutex(budgets)
        let clock = ContinuousClock()
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        drops = RateLimitedLog(emit: log)
    }

    var name: String { base.name }

    @discardableResult
    func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        let time = now()
        guard budgets.withLock({ $0.spend(packet.count, to: peer.address, at: time) }) else {
            drops.log("budget \(peer.host)", "dropped answers to \(peer.host): over its budget of "
                + "\(bytesPerSecond) bytes/s (a forged source, or a client asking too much)")
            return false
        }
        return base.send(packet, to: peer)
    }

    func startReceiving(maximumPacketBytes: Int,
                        onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                        onOversized: @escaping @Sendable (Int, OSCPeer) -> Void) {
        base.startReceiving(maximumPacketBytes: maximumPacketBytes, onPacket: onPacket, onOversized: onOversized)
    }

    func isOwnEndpoint(_ peer: OSCPeer) -> Bool { base.isOwnEndpoint(peer) }

    func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void) {
        base.reportUnreachable(to: handler)
    }

    /// Datagrams dropped for being over budget, and the addresses tracked.
    var droppedCount: Int { budgets.withLock { $0.droppedCount } }
    var trackedSourceCount: Int { budgets.withLock { $0.trackedSourceCount } }

    /// Writes the counts of drop lines held back in ended windows.
    func flushSuppressedLogLines() { drops.flushSuppressed() }
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

    /// `loopback` for 127.0.0.1, localhost and ::1, `network` for anything else (0.0.0.0 too;
    /// and, deliberately, 127.0.0.2…: so a test can exercise the network rules on one host).
    public init(listeningOn host: String) {
        self = ["127.0.0.1", "localhost", "::1"].contains(host) ? .loopback : .network
    }
}
