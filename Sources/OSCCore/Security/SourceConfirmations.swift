/// Source addresses that proved they receive what SoundFit sends them, on an exposed port: a
/// source asks for a token (`/source/confirm`), SoundFit sends it to the source's address, and
/// the source echoes it (`/source/confirm ,s token`) from that address (any port). A forger
/// never sees the token, so a confirmed address is a real listener, like QUIC's address
/// validation or the subscription confirmations of `SubscriptionConfirmations` (a confirmed
/// subscription confirms its target's address too). Only confirmed sources get answers larger
/// than `SourceBudgets.answerRatio` times their request (`/list`, `/status`, `/patch/list`,
/// `/response`, meter streams).
///
/// Tokens are stateless: keyed hashes (SipHash, the standard library's `Hasher`, seeded per
/// process, over a 256-bit random secret) of the address and a `tokenWindow`-long epoch; one
/// is valid in its epoch and the next. So asking for tokens keeps nothing, whatever the number
/// of forged sources. The confirmed addresses are bounded: at most `capacity`, each until
/// `lifetime` passes without a packet from it; a new one evicts the least recently heard
/// (forgers cannot add any).
///
/// A pure state machine over plain `Duration` times.
public struct SourceConfirmations: Sendable {
    public static let defaultCapacity = 256
    public static let defaultLifetime: Duration = .seconds(600)
    public static let tokenWindow: Duration = .seconds(30)

    public let capacity: Int
    public let lifetime: Duration
    private let secret: (UInt64, UInt64, UInt64, UInt64)
    /// Confirmed addresses (network byte order) and when a packet last came from each.
    private var confirmed: [UInt32: Duration] = [:]

    public init(capacity: Int = defaultCapacity, lifetime: Duration = defaultLifetime) {
        precondition(capacity > 0 && lifetime > .zero)
        self.capacity = capacity
        self.lifetime = lifetime
        var generator = SystemRandomNumberGenerator()
        secret = (generator.next(), generator.next(), generator.next(), generator.next())
    }

    /// The token for `address` at `now`: 32 hex digits.
    public func token(for address: UInt32, at now: Duration) -> String {
        token(for: address, epoch: Self.epoch(of: now))
    }

    /// Confirms `address` when `token` is its token of this epoch or the previous one.
    public mutating func confirm(_ token: String, from address: UInt32, at now: Duration) -> Bool {
        let epoch = Self.epoch(of: now)
        guard token == self.token(for: address, epoch: epoch) || token == self.token(for: address, epoch: epoch - 1) else {
            return false
        }
        confirm(address, at: now)
        return true
    }

    /// Confirms `address` (it echoed a token some other way: a subscription's challenge).
    public mutating func confirm(_ address: UInt32, at now: Duration) {
        if confirmed[address] == nil, confirmed.count >= capacity {
            confirmed = confirmed.filter { now - $0.value < lifetime }
            if confirmed.count >= capacity, let oldest = confirmed.min(by: { $0.value < $1.value })?.key {
                confirmed[oldest] = nil
            }
        }
        confirmed[address] = now
    }

    /// A packet came from `address` at `now`: a confirmed address stays confirmed for `lifetime` more.
    public mutating func heard(from address: UInt32, at now: Duration) {
        guard let last = confirmed[address] else { return }
        confirmed[address] = now - last < lifetime ? now : nil
    }

    /// Whether `address` is confirmed at `now`.
    public func isConfirmed(_ address: UInt32, at now: Duration) -> Bool {
        guard let last = confirmed[address] else { return false }
        return now - last < lifetime
    }

    /// Confirmed addresses held (never more than `capacity`).
    public var confirmedCount: Int { confirmed.count }

    private static func epoch(of time: Duration) -> Int64 {
        time.components.seconds / tokenWindow.components.seconds
    }

    private func token(for address: UInt32, epoch: Int64) -> String {
        (0..<2).map { (lane: UInt8) in
            var hasher = Hasher()
            hasher.combine(secret.0)
            hasher.combine(secret.1)
            hasher.combine(lane)
            hasher.combine(address)
            hasher.combine(epoch)
            hasher.combine(secret.2)
            hasher.combine(secret.3)
            let hex = String(UInt64(bitPattern: Int64(hasher.finalize())), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
