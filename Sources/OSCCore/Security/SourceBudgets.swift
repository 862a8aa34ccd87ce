/// What each source address may draw from SoundFit when it listens beyond loopback: a token
/// bucket of bytes per IPv4 address (every port of a host shares it), in the spirit of DNS
/// response-rate limiting and QUIC's anti-amplification limit. A datagram's source address can
/// be forged on a network, so without a budget one small request "from" a victim makes SoundFit
/// send it many times the bytes; with it, a victim receives at most `burstBytes` at once and
/// `bytesPerSecond` after that, whatever an attacker sends.
///
/// On top of the rate, a source that has not confirmed its address (`SourceConfirmations`) is
/// answered at most `answerRatio` times the bytes it sent (its earned credit, kept up to
/// `burstBytes`), in the spirit of QUIC's limit before address validation: a forged source
/// makes SoundFit send its victim no more than three times what the forger sent.
///
/// A pure state machine over plain `Duration` times (time since some origin). Memory is
/// bounded: at most `maximumSources` addresses are tracked; a new one evicts the address used
/// least recently (whose bucket has refilled the longest, so forgetting it gives nothing away).
public struct SourceBudgets: Sendable {
    public static let defaultBytesPerSecond = 16 * 1024
    public static let defaultBurstBytes = 64 * 1024
    public static let defaultMaximumSources = 1024
    /// Bytes an unconfirmed source may receive per byte it sent.
    public static let answerRatio = 3

    /// What `spend(_:to:at:confirmed:)` decided.
    public enum Verdict: Sendable, Equatable {
        case allowed
        /// Over the address's rate budget.
        case overBudget
        /// Over `answerRatio` times what the unconfirmed address sent.
        case overRatio
    }

    struct Bucket: Sendable {
        var credit: Double
        var lastUse: Duration
        /// What an unconfirmed source may still receive: `answerRatio` × the bytes it sent, less
        /// what it was sent.
        var earned: Double = 0
    }

    public let bytesPerSecond: Int
    public let burstBytes: Int
    public let maximumSources: Int
    private var buckets: [UInt32: Bucket] = [:]
    /// Datagrams refused since the start.
    public private(set) var droppedCount = 0
    /// Of those, the ones refused for the ratio of an unconfirmed source.
    public private(set) var droppedForRatioCount = 0

    public init(bytesPerSecond: Int = defaultBytesPerSecond, burstBytes: Int = defaultBurstBytes,
                maximumSources: Int = defaultMaximumSources) {
        precondition(bytesPerSecond > 0 && burstBytes > 0 && maximumSources > 0)
        self.bytesPerSecond = bytesPerSecond
        self.burstBytes = burstBytes
        self.maximumSources = maximumSources
    }

    /// Whether `bytes` may be sent to `address` (network byte order) at time `now`; when they
    /// may, they are taken from its budget. The rate only: for a confirmed source.
    public mutating func spend(_ bytes: Int, to address: UInt32, at now: Duration) -> Bool {
        spend(bytes, to: address, at: now, confirmed: true) == .allowed
    }

    /// Whether `bytes` may be sent to `address` at `now`: within its rate budget and, unless
    /// the address is `confirmed`, within what it earned by sending. Allowed bytes are taken
    /// from both.
    public mutating func spend(_ bytes: Int, to address: UInt32, at now: Duration, confirmed: Bool) -> Verdict {
        var bucket = refilled(address, at: now)
        let verdict: Verdict = if Double(bytes) > bucket.credit {
            .overBudget
        } else if !confirmed, Double(bytes) > bucket.earned {
            .overRatio
        } else {
            .allowed
        }
        switch verdict {
        case .allowed:
            bucket.credit -= Double(bytes)
            if !confirmed { bucket.earned -= Double(bytes) }
        case .overBudget:
            droppedCount += 1
        case .overRatio:
            droppedCount += 1
            droppedForRatioCount += 1
        }
        buckets[address] = bucket
        return verdict
    }

    /// `bytes` arrived from `address` at `now`: an unconfirmed source earns `answerRatio` times
    /// as many bytes of answers (kept up to `burstBytes`).
    public mutating func received(_ bytes: Int, from address: UInt32, at now: Duration) {
        var bucket = refilled(address, at: now)
        bucket.earned = min(Double(burstBytes), bucket.earned + Double(Self.answerRatio * bytes))
        buckets[address] = bucket
    }

    private mutating func refilled(_ address: UInt32, at now: Duration) -> Bucket {
        var bucket = buckets[address] ?? newBucket(at: now)
        let elapsed = now - bucket.lastUse
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.credit = min(Double(burstBytes), bucket.credit + max(0, seconds) * Double(bytesPerSecond))
        bucket.lastUse = now
        return bucket
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
