import OSCCore

/// Subscriptions that wait for their target's confirmation. Value feedback is byte for byte a
/// set, so it must never reach a target that did not ask for it: a `/subscribe ,s url` other
/// than the requester's own address and port only sends the target one
/// `/subscribe/challenge ,s token` (64 bytes, an unguessable token), and nothing else until the
/// target's host sends back `/subscribe/confirm ,s token` — the way WebSub verifies a
/// subscriber's intent. Another SoundFit never confirms (it drops the challenge as a reply).
///
/// A pure state machine over plain `Duration` times. Bounds: at most `capacity` pending in all
/// and `maximumPerOwner` per requester; each expires after `window`; at most one challenge
/// per `challengeInterval` to another host than the requester's (its own host's ports are its
/// own business), and none to a target that already has one pending, so repeating a
/// `/subscribe` never sends more.
public struct SubscriptionConfirmations: Sendable {
    public static let defaultCapacity = 16
    public static let defaultMaximumPerOwner = 4
    public static let defaultWindow: Duration = .seconds(30)
    public static let defaultChallengeInterval: Duration = .seconds(1)

    /// One subscription waiting for its target.
    public struct Pending: Sendable, Equatable {
        public let token: String
        public let target: OSCPeer
        public let owner: OSCPeer
        public let feedback: FeedbackForm
        /// The parameters the subscription will follow (nil: all).
        public let selection: ParameterSelection?
        /// When the challenge was sent (time since the clock origin).
        public let created: Duration
        public let expiry: Duration

        /// `/subscribe/challenge ,s token`: the one message the target gets before it confirms.
        public var challengeMessage: OSCMessage { OSCMessage("/subscribe/challenge", [.string(token)]) }

        /// `/subscribe/pending ,s url ,s feedback ,i seconds`: the requester's answer; the target
        /// has that long to confirm.
        public func pendingMessage(at now: Duration) -> OSCMessage {
            OSCMessage("/subscribe/pending", [.string(target.oscURL), .string(feedback.rawValue),
                                              .int32(Int32(clamping: (expiry - now).components.seconds))])
        }
    }

    /// What `request` did.
    public enum Outcome: Sendable, Equatable {
        /// A new pending subscription: send its challenge to the target.
        case challenge(Pending)
        /// The target already has a challenge pending: nothing more is sent to it.
        case alreadyPending(Pending)
    }

    public let capacity: Int
    public let maximumPerOwner: Int
    public let window: Duration
    public let challengeInterval: Duration
    public private(set) var pending: [Pending] = []

    public init(capacity: Int = defaultCapacity, maximumPerOwner: Int = defaultMaximumPerOwner,
                window: Duration = defaultWindow, challengeInterval: Duration = defaultChallengeInterval) {
        precondition(capacity > 0 && maximumPerOwner > 0 && window > .zero && challengeInterval >= .zero)
        self.capacity = capacity
        self.maximumPerOwner = maximumPerOwner
        self.window = window
        self.challengeInterval = challengeInterval
    }

    /// Records a subscription of `target` by `owner` awaiting confirmation, with `token` (the
    /// caller draws it from a cryptographic generator).
    public mutating func request(_ target: OSCPeer, owner: OSCPeer, feedback: FeedbackForm,
                                 selection: ParameterSelection? = nil, token: String, at now: Duration) throws(SubscriptionError) -> Outcome {
        expire(at: now)
        if let existing = pending.first(where: { $0.target == target }) { return .alreadyPending(existing) }
        guard pending.count < capacity else { throw .confirmationsFull(limit: capacity) }
        guard pending.count(where: { $0.owner == owner }) < maximumPerOwner else {
            throw .confirmationsFull(limit: maximumPerOwner)
        }
        if target.address != owner.address,
           pending.contains(where: { $0.target.address == target.address && now - $0.created < challengeInterval }) {
            throw .confirmationTooSoon(host: target.host, interval: challengeInterval)
        }
        let entry = Pending(token: token, target: target, owner: owner, feedback: feedback, selection: selection, created: now,
                            expiry: now + window)
        pending.append(entry)
        return .challenge(entry)
    }

    /// `/subscribe/confirm ,s token` from `sender`: removes and returns the pending subscription
    /// when the token is known, unexpired, and the sender is on the target's host.
    public mutating func confirm(_ token: String, from sender: OSCPeer, at now: Duration) throws(SubscriptionError) -> Pending {
        expire(at: now)
        guard let index = pending.firstIndex(where: { $0.token == token }) else { throw .unknownToken }
        guard pending[index].target.address == sender.address else {
            throw .confirmationFromAnotherHost(url: pending[index].target.oscURL)
        }
        return pending.remove(at: index)
    }

    /// Forgets pending subscriptions whose window has ended; returns them.
    @discardableResult
    public mutating func expire(at now: Duration) -> [Pending] {
        let expired = pending.filter { $0.expiry <= now }
        pending.removeAll { $0.expiry <= now }
        return expired
    }

    /// Forgets the pending subscription of `target` (found unreachable, or unsubscribed).
    @discardableResult
    public mutating func drop(_ target: OSCPeer) -> Pending? {
        guard let index = pending.firstIndex(where: { $0.target == target }) else { return nil }
        return pending.remove(at: index)
    }

    /// A token: 128 random bits from the system's cryptographic generator, as 32 hex digits.
    public static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
