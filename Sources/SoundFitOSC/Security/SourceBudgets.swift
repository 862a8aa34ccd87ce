/// What each source address may draw from SoundFit when it listens beyond loopback: a token
/// bucket of bytes per IPv4 address (every port of a host shares it), in the spirit of DNS
/// response-rate limiting and QUIC's anti-amplification limit. A datagram's source address can
/// be forged on a network, so without a budget one small request "from" a victim makes SoundFit
/// send it many times the bytes; with it, a victim receives at most `burstBytes` at once and
/// `bytesPerSecond` after that, whatever an attacker sends.
///
/// A pure state machine over plain `Duration` times (time since some origin). Memory is
/// bounded: at most `maximumSources` addresses are tracked; a new one evicts the address used
/// least recently (whose bucket has refilled the longest, so forgetting it gives nothing away).
public struct SourceBudgets: Sendable {
    public static let defaultBytesPerSecond = 16 * 1024
    public static let defaultBurstBytes = 64 * 1024
    public static let defaultMaximumSources = 1024

    struct Bucket: Sendable {
        var credit: Double
        var lastUse: Duration
    }

    public let bytesPerSecond: Int
    public let burstBytes: Int
    public let maximumSources: Int
    private var buckets: [UInt32: Bucket] = [:]
    /// Datagrams refused since the start.
    public private(set) var droppedCount = 0

    public init(bytesPerSecond: Int = defaultBytesPerSecond, burstBytes: Int = defaultBurstBytes,
                maximumSources: Int = defaultMaximumSources) {
        precondition(bytesPerSecond > 0 && burstBytes > 0 && maximumSources > 0)
        self.bytesPerSecond = bytesPerSecond
        self.burstBytes = burstBytes
        self.maximumSources = maximumSources
    }

    /// Whether `bytes` may be sent to `address` (network byte order) at time `now`; when they
    /// may, they are taken from its budget.
    public mutating func spend(_ bytes: Int, to address: UInt32, at now: Duration) -> Bool {
        var bucket = buckets[address] ?? newBucket(at: now)
        let elapsed = now - bucket.lastUse
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.credit = min(Double(burstBytes), bucket.credit + max(0, seconds) * Double(bytesPerSecond))
        bucket.lastUse = now
        let allowed = Double(bytes) <= bucket.credit
        if allowed { bucket.credit -= Double(bytes) } else { droppedCount += 1 }
        buckets[address] = bucket
        return allowed
    }

    /// Addresses with a bucket (never more than `maximumSources`).
    public var trackedSourceCount: Int { buckets.count }

    private mutating func newBucket(at now: Duration) -> Bucket {
        if buckets.count >= maximumSources,
           let oldest = buckets.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            buckets[oldest] = nil
        }
        return Bucket(credit: Double(burstBytes), lastUse: now)
    }
}
