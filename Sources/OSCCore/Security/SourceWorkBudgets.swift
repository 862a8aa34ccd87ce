/// How much of a receive thread's time each source may take: a token bucket of seconds of work per sender (address and port: local clients all send from 127.0.0.1, and each is a
/// client of its own; over TCP, each connection). Packets are handled one at a time on the transport's
/// receive thread, so without it one client sending costly packets (bundles of hundreds of
/// address patterns: 54–85 ms each) delays every other client's requests behind its own. A
/// source that used up its budget has its packets dropped, at the cost of a clock read and a
/// table lookup, until the bucket refills; the first packet dropped in each such episode is
/// answered with one `/error`.
///
/// Always on, not only while the thread is saturated: a heavy client's backlog builds in the
/// socket buffer while nobody else sends, and a newcomer would wait behind all of it (tried:
/// gating on a saturated thread let a set wait 272 ms). Half the thread is generous enough
/// for a lone client's stress test (5 000 sets/s).
///
/// The bound it gives: with one such source, another source's packet waits at most
/// `burst / (1 - share)` (the heavy source spending what it holds, and its share of the wait)
/// plus one packet's work (bounded by `OSCControlSurface.maximumPatternMessagesPerPacket`) and
/// the cheap drops of its backlog: 200 ms plus a packet with the defaults, stated as 250 ms in
/// the tests.
///
/// A pure state machine over plain `Duration` times. Memory is bounded: at most
/// `maximumSources` senders; a new one evicts the least recently used. (A process that
/// rotates its source ports gets a fresh burst per port: fairness between clients, not a
/// defence against a local process bent on load, which has other means.)
public struct SourceWorkBudgets: Sendable {
    public static let defaultShare = 0.5
    public static let defaultBurst: Duration = .milliseconds(100)
    public static let defaultMaximumSources = 1024

    /// What `admit` decided for one packet.
    public enum Admission: Sendable, Equatable {
        case handle
        /// Over budget, the first packet of this episode: answer it with one `/error`.
        case refuse
        /// Over budget, already told.
        case drop
    }

    struct Bucket: Sendable {
        /// Seconds of work the source may still take.
        var credit: Double
        var lastUse: Duration
        var told = false
    }

    /// Seconds of work per second of time a source earns.
    public let share: Double
    public let burst: Duration
    public let maximumSources: Int
    private var buckets: [OSCPeer: Bucket] = [:]
    /// Packets dropped (or refused) since the start.
    public private(set) var droppedCount = 0

    public init(share: Double = defaultShare, burst: Duration = defaultBurst, maximumSources: Int = defaultMaximumSources) {
        precondition(share > 0 && burst > .zero && maximumSources > 0)
        self.share = share
        self.burst = burst
        self.maximumSources = maximumSources
    }

    /// Whether a packet from `source` arriving at `now` is handled.
    public mutating func admit(_ source: OSCPeer, at now: Duration) -> Admission {
        var bucket = buckets[source] ?? newBucket(at: now)
        let elapsed = Self.seconds(now - bucket.lastUse)
        bucket.credit = min(Self.seconds(burst), bucket.credit + max(0, elapsed) * share)
        bucket.lastUse = now
        let admission: Admission
        if bucket.credit > 0 {
            bucket.told = false
            admission = .handle
        } else {
            droppedCount += 1
            admission = bucket.told ? .drop : .refuse
            bucket.told = true
        }
        buckets[source] = bucket
        return admission
    }

    /// A handled packet from `source` took `work` of the thread's time.
    public mutating func charge(_ work: Duration, to source: OSCPeer) {
        guard var bucket = buckets[source] else { return }
        // Never in debt for more than one burst: a single slow packet does not silence a source for long.
        bucket.credit = max(-Self.seconds(burst), bucket.credit - Self.seconds(work))
        buckets[source] = bucket
    }

    /// Senders with a bucket (never more than `maximumSources`).
    public var trackedSourceCount: Int { buckets.count }

    private mutating func newBucket(at now: Duration) -> Bucket {
        if buckets.count >= maximumSources,
           let oldest = buckets.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            buckets[oldest] = nil
        }
        return Bucket(credit: Self.seconds(burst), lastUse: now)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
