import OSCCore

/// Who receives value feedback, terminal `/state` reports and notifications, and what is
/// waiting to be sent to each of them.
///
/// A pure state machine: no sockets, no clocks, no locks. `SharedSubscriberRegistry` wraps it
/// for use from several threads; the OSC surface sends what `drain()` returns and reports each
/// send's result back with `recordSend`.
///
/// Rules:
/// - A subscription is identified by its target (where its messages go): the sender of
///   `/subscribe`, or the `osc.udp://` URL it named. Its owner is the peer that subscribed it.
/// - At most `capacity` subscriptions (32 by default); one more is rejected, not queued. One
///   owner (address and port) holds at most `maximumPerOwner` of them (8), so no single client
///   can take every slot.
/// - A subscription has a lease (`lease`, 90 s by default): subscribing again renews it, and
///   `expire(at:)` drops the ones not renewed in time. A target that turns out unreachable
///   (ICMP port unreachable) is dropped at once (`drop(_:)`).
/// - Only the owner, the target itself, or a client on the target's host may change or remove a
///   subscription: no message can redirect or cut off another client's feedback. (Clients on one
///   host are not told apart further: liblo-tools' `oscsend` sends from a new port each time.)
/// - A subscriber whose sends fail `maximumConsecutiveFailures` times in a row is dropped.
/// - Feedback is coalesced per (subscriber, key), latest wins, so pending memory is bounded by
///   subscribers × keys however fast changes arrive. Keys are a parameter's value, its
///   normalized value, its terminal `/state`, or a notification address (`/session`, …);
///   callers pass only registry addresses, so the key set is finite.
/// - The client that made a change (its origin) gets no echo: a subscription whose target or
///   owner is the origin is skipped.
public struct SubscriberRegistry: Sendable {
    public static let defaultCapacity = 32
    public static let defaultMaximumPerOwner = 8
    public static let defaultMaximumConsecutiveFailures = 10
    public static let defaultLease: Duration = .seconds(90)

    /// One subscription.
    public struct Subscriber: Sendable, Equatable {
        /// Where its messages go.
        public let target: OSCPeer
        /// The peer that subscribed it.
        public let owner: OSCPeer
        public var feedback: FeedbackForm
        /// The parameters it follows (`/subscribe ,s pattern`); nil: all of them.
        public var selection: ParameterSelection?
        /// Failed sends since the last successful one.
        public internal(set) var consecutiveFailures: Int
        /// When the lease ends unless it is renewed (time since the registry's clock origin).
        public internal(set) var expiry: Duration
        /// The lease granted, as `/subscribed` reports it.
        public internal(set) var lease: Duration

        public init(target: OSCPeer, owner: OSCPeer, feedback: FeedbackForm, consecutiveFailures: Int = 0,
                    expiry: Duration = .seconds(Int64.max / 4), lease: Duration = SubscriberRegistry.defaultLease,
                    selection: ParameterSelection? = nil) {
            self.target = target
            self.owner = owner
            self.feedback = feedback
            self.selection = selection
            self.consecutiveFailures = consecutiveFailures
            self.expiry = expiry
            self.lease = lease
        }

        /// Whether `peer` may change or remove this subscription.
        public func isManageable(by peer: OSCPeer) -> Bool {
            peer == owner || peer.address == target.address
        }

        /// Whether a change made by `origin` is echoed to this subscriber (it is not, to the
        /// client that made it).
        func receivesChanges(from origin: OSCPeer?) -> Bool {
            origin != target && origin != owner
        }

        /// Whether it follows the parameter at `address` (every subscriber follows notifications).
        func follows(_ address: String?) -> Bool {
            guard let address, let selection else { return true }
            return selection.contains(address)
        }
    }

    /// What coalesces: at most one pending message per subscriber and key.
    enum FeedbackKey: Hashable, Sendable {
        case value(String)
        case normalized(String)
        case state(String)
        case notification(String)
    }

    public let capacity: Int
    public let maximumPerOwner: Int
    public let maximumConsecutiveFailures: Int
    public let lease: Duration
    /// In subscription order.
    public private(set) var subscribers: [Subscriber] = []
    var pending: [OSCPeer: CoalescingQueue<FeedbackKey, OSCMessage>] = [:]
    /// True from the first message enqueued after a drain until the next drain.
    var flushRequested = false

    public init(capacity: Int = defaultCapacity, maximumPerOwner: Int = defaultMaximumPerOwner,
                maximumConsecutiveFailures: Int = defaultMaximumConsecutiveFailures,
                lease: Duration = defaultLease) {
        precondition(capacity > 0 && maximumPerOwner > 0 && maximumConsecutiveFailures > 0 && lease > .zero)
        self.capacity = capacity
        self.maximumPerOwner = maximumPerOwner
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.lease = lease
    }

    /// The subscription whose target is `peer`.
    public func subscriber(at peer: OSCPeer) -> Subscriber? {
        subscribers.first { $0.target == peer }
    }

    /// Adds a subscription for `sender` (or for `request.url`) at time `now`, or renews the lease
    /// and changes the feedback form of an existing one the sender may manage. Returns the
    /// subscription; the caller replies with `SubscriberFeedback.subscribedMessage` and then
    /// sends the snapshot.
    @discardableResult
    public mutating func subscribe(from sender: OSCPeer, _ request: SubscriptionRequest = SubscriptionRequest(),
                                   at now: Duration = .zero) throws(SubscriptionError) -> Subscriber {
        let target = request.url ?? sender
        if let index = subscribers.firstIndex(where: { $0.target == target }) {
            guard subscribers[index].isManageable(by: sender) else { throw .anotherClients(url: target.oscURL) }
            subscribers[index].feedback = request.feedback
            subscribers[index].selection = request.selection
            subscribers[index].expiry = now + lease
            return subscribers[index]
        }
        try checkRoom(for: sender)
        let subscriber = Subscriber(target: target, owner: sender, feedback: request.feedback, expiry: now + lease,
                                    lease: lease, selection: request.selection)
        subscribers.append(subscriber)
        return subscriber
    }

    /// Throws unless a new subscription owned by `owner` would fit: fewer than `capacity` in
    /// all, fewer than `maximumPerOwner` of its own.
    public func checkRoom(for owner: OSCPeer) throws(SubscriptionError) {
        guard subscribers.count < capacity else { throw .full(capacity: capacity) }
        guard subscribers.count(where: { $0.owner == owner }) < maximumPerOwner else {
            throw .ownerFull(limit: maximumPerOwner)
        }
    }

    /// Drops the subscriptions whose lease ended before `now`; returns them (for a log line).
    public mutating func expire(at now: Duration) -> [Subscriber] {
        let expired = subscribers.filter { $0.expiry <= now }
        for subscriber in expired { remove(subscriber.target) }
        return expired
    }

    /// Drops the subscription whose target is `target` (it was found unreachable); returns it.
    public mutating func drop(_ target: OSCPeer) -> Subscriber? {
        guard let subscriber = subscriber(at: target) else { return nil }
        remove(target)
        return subscriber
    }

    /// Removes subscriptions. With a URL: that subscription, if the sender may manage it.
    /// Without: the sender's own (its address as target) and the ones it made. Returns what
    /// was removed (never empty); pending messages to them are discarded.
    @discardableResult
    public mutating func unsubscribe(from sender: OSCPeer, url: OSCPeer? = nil) throws(SubscriptionError) -> [Subscriber] {
        let removed: [Subscriber]
        if let url {
            guard let subscriber = subscriber(at: url) else { throw .notSubscribed(url: url.oscURL) }
            guard subscriber.isManageable(by: sender) else { throw .anotherClients(url: url.oscURL) }
            removed = [subscriber]
        } else {
            removed = subscribers.filter { $0.target == sender || $0.owner == sender }
            guard !removed.isEmpty else { throw .notSubscribed(url: sender.oscURL) }
        }
        for subscriber in removed { remove(subscriber.target) }
        return removed
    }

    /// Reports whether a message to `target` could be sent. After
    /// `maximumConsecutiveFailures` failures in a row the subscription is dropped and returned
    /// (for a log line); a success resets the count.
    @discardableResult
    public mutating func recordSend(to target: OSCPeer, succeeded: Bool) -> Subscriber? {
        guard let index = subscribers.firstIndex(where: { $0.target == target }) else { return nil }
        if succeeded {
            subscribers[index].consecutiveFailures = 0
            return nil
        }
        subscribers[index].consecutiveFailures += 1
        guard subscribers[index].consecutiveFailures >= maximumConsecutiveFailures else { return nil }
        let dropped = subscribers[index]
        remove(target)
        return dropped
    }

    private mutating func remove(_ target: OSCPeer) {
        subscribers.removeAll { $0.target == target }
        pending[target] = nil
    }
}
