import Logging
import OSCCore
import Synchronization

/// Subscriptions and the feedback sent to them. Messages queue per subscriber and are sent
/// shortly after the first one: bursts within the flush delay coalesce (latest value per
/// address wins).
///
/// A subscription's messages go over the transport its `/subscribe` came over when the client
/// subscribed itself, and over the datagram transport for an `osc.udp://` URL.
///
/// Thread rules: any thread except the JACK process callback; a flush runs in a short task.
final class SubscriberFeedback: Sendable {
    static let flushDelay: Duration = .milliseconds(5)

    /// What a `/subscribe` did.
    enum Outcome {
        /// Subscribed (new, or `renewed`: the target was subscribed already).
        case subscribed(SubscriberRegistry.Subscriber, renewed: Bool)
        /// A third party's subscription now awaits its confirmation; `challenge` is the message
        /// to send the target, nil when one is pending already; `reply` tells the requester.
        case pending(SubscriptionConfirmations.Pending, challenge: OSCMessage?, reply: OSCMessage)
    }

    let registry: SharedSubscriberRegistry
    /// The datagram transport: where `osc.udp://` subscriptions are sent from.
    let transport: any OSCTransport
    /// Only hosts it admits receive feedback.
    let allowList: OSCAllowList
    /// On a port exposed to the network every non-loopback target confirms, its own
    /// subscription too: there a `/subscribe` "from" a host may be forged.
    let exposure: OSCExposure
    private let logger: Logger
    private let confirmations = Mutex(SubscriptionConfirmations())
    /// Time since the feedback's creation: leases and confirmation windows are measured on it.
    private let now: @Sendable () -> Duration
    /// The transport of each subscription that is not the datagram transport, by target.
    private let transports = Mutex<[OSCPeer: any OSCTransport]>([:])
    /// Whether a flush of subscriber feedback is scheduled.
    private let flushScheduled = Atomic<Bool>(false)
    /// Feedback queued and feedback sent, counted in enqueues, and what waits for a flush.
    private let progress = Mutex(FlushProgress())
    /// One flush at a time, so "sent through n" is only ever said of feedback already sent.
    private let flushTurn = Mutex(())
    /// Subscriptions dropped (expired, unreachable) are logged at most a few times per interval.
    private let drops: RateLimitedLog<String>
    /// Yielded when a subscription or a pending confirmation is added: wakes `sweepExpired`,
    /// which sleeps while there is nothing that could expire (an idle SoundFit wakes for nothing).
    private let expirable = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(transport: any OSCTransport, allowList: OSCAllowList = .everyone, exposure: OSCExposure = .loopback,
         lease: Duration = SubscriberRegistry.defaultLease, logger: Logger) {
        registry = SharedSubscriberRegistry(SubscriberRegistry(lease: lease))
        self.transport = transport
        self.allowList = allowList
        self.exposure = exposure
        self.logger = logger
        let clock = ContinuousClock()
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        drops = RateLimitedLog { [logger] line in logger.info("\(line)") }
        transport.reportUnreachable { [weak self] peer in self?.dropUnreachable(peer) }
    }

    /// Subscribes `sender` (or the request's URL); see `SubscriberRegistry.subscribe(from:_:at:)`.
    /// A URL naming SoundFit's own endpoint is refused: SoundFit would feed itself its feedback.
    /// A URL outside `--osc-allow` is refused. A URL other than the sender's own address and
    /// port (a UDP sender's: a TCP or WebSocket peer is never its own `osc.udp://` target) waits for its target's confirmation (`SubscriptionConfirmations`): the target may be
    /// an OSC server (another SoundFit) for which feedback is a set. So does, on an exposed port,
    /// any target outside loopback, the sender's own too (a source address can be forged there;
    /// 127.0.0.0/8 cannot come in from the network).
    func subscribe(from sender: OSCSender, _ request: SubscriptionRequest) throws(SubscriptionError) -> Outcome {
        if let url = request.url, transport.isOwnEndpoint(url) { throw .ownSocket(url: url.oscURL) }
        let target = request.url ?? sender.peer
        guard allowList.allows(target) else { throw .notAllowed(url: target.oscURL) }
        let time = now()
        // The transport the subscription is sent over (nil: the datagram transport). A target is
        // identified with it: a TCP or WebSocket peer and a UDP endpoint with the same address
        // and port are different endpoints (any local program can bind its TCP client to the
        // port another program owns on UDP), so a URL is "the sender's own" only for a sender
        // that came over the datagram transport itself.
        let route: (any OSCTransport)? = request.url == nil && sender.transport !== transport ? sender.transport : nil
        let isOwnTarget = request.url == nil || (target == sender.peer && sender.transport === transport)
        let existing = registry.withRegistry { $0.subscriber(at: target) }
        if existing != nil, transports.withLock({ $0[target] }) !== route {
            throw .subscribedOverAnotherTransport(url: target.oscURL)
        }
        if existing == nil, !isOwnTarget || (exposure == .network && !target.isLoopback) {
            return try awaitConfirmation(of: target, by: sender.peer, request, at: time)
        }
        // Recorded first, so a flush racing with the subscription already sends over its transport.
        let previous = transports.withLock { transports in
            let previous = transports[target]
            transports[target] = route
            return previous
        }
        do {
            let subscriber = try registry.subscribe(from: sender.peer, request, at: time)
            expirable.continuation.yield()
            return .subscribed(subscriber, renewed: existing != nil)
        } catch {
            transports.withLock { $0[target] = previous }
            throw error
        }
    }

    private func awaitConfirmation(of target: OSCPeer, by owner: OSCPeer, _ request: SubscriptionRequest,
                                   at time: Duration) throws(SubscriptionError) -> Outcome {
        try registry.withRegistry { (registry: inout SubscriberRegistry) throws(SubscriptionError) in
            try registry.checkRoom(for: owner)
        }
        let outcome = try confirmations.withLock { (confirmations: inout SubscriptionConfirmations) throws(SubscriptionError) in
            try confirmations.request(target, owner: owner, feedback: request.feedback, selection: request.selection,
                                      token: SubscriptionConfirmations.makeToken(), at: time)
        }
        expirable.continuation.yield()
        switch outcome {
        case .challenge(let pending):
            return .pending(pending, challenge: pending.challengeMessage, reply: pending.pendingMessage(at: time))
        case .alreadyPending(let pending):
            return .pending(pending, challenge: nil, reply: pending.pendingMessage(at: time))
        }
    }

    /// `/subscribe/confirm ,s token` from `sender`: subscribes the confirmed target for the owner
    /// that asked. Returns the new subscription; the caller sends it `/subscribed` and the snapshot.
    func confirm(_ token: String, from sender: OSCSender) throws(SubscriptionError) -> SubscriberRegistry.Subscriber {
        let time = now()
        let pending = try confirmations.withLock { (confirmations: inout SubscriptionConfirmations) throws(SubscriptionError) in
            try confirmations.confirm(token, from: sender.peer, at: time)
        }
        transports.withLock { $0[pending.target] = nil }
        // The target's host echoed a token sent to it: it receives there (`SourceConfirmations`).
        (transport as? BudgetedTransport)?.confirm(pending.target.address)
        let subscriber = try registry.subscribe(from: pending.owner, SubscriptionRequest(url: pending.target, feedback: pending.feedback,
                                                                                      selection: pending.selection),
                                                at: time)
        // The sweep may have found nothing to expire between the pending entry's removal and
        // this subscription: wake it again.
        expirable.continuation.yield()
        return subscriber
    }

    /// Removes subscriptions; see `SubscriberRegistry.unsubscribe(from:url:)`. Returns each
    /// removed subscription's `/unsubscribed` reply.
    /// A sender's own subscription is the one sent over its transport: a TCP peer cannot remove
    /// the UDP endpoint's with the same address and port, nor the reverse.
    func unsubscribe(from sender: OSCSender, url: OSCPeer?) throws(SubscriptionError) -> [OSCMessage] {
        let route: (any OSCTransport)? = sender.transport === transport ? nil : sender.transport
        if (url ?? sender.peer) == sender.peer, registry.withRegistry({ $0.subscriber(at: sender.peer) }) != nil,
           transports.withLock({ $0[sender.peer] }) !== route {
            throw .subscribedOverAnotherTransport(url: sender.peer.oscURL)
        }
        let removed = try registry.unsubscribe(from: sender.peer, url: url)
        let replies = removed.map { OSCMessage("/unsubscribed", [.string(self.url(of: $0.target))]) }
        forget(removed)
        return replies
    }

    /// A connection closed: the subscription its peer made for itself over it is removed, and
    /// nothing more is queued for it.
    func disconnected(_ sender: OSCSender) {
        let routedThere = transports.withLock { $0[sender.peer] === sender.transport }
        guard routedThere, let removed = try? registry.unsubscribe(from: sender.peer, url: sender.peer) else { return }
        forget(removed)
        logger.debug("dropped the subscription of \(sender.transport.url(of: sender.peer)): its connection closed")
    }

    /// `/subscribed ,s url ,s feedback ,i lease_seconds [,s address_pattern]`, the URL with the
    /// scheme of the transport the subscription is sent over (`osc.tcp://` for a client
    /// subscribed over its connection), the pattern when the subscription follows a selection.
    func subscribedMessage(_ subscriber: SubscriberRegistry.Subscriber) -> OSCMessage {
        var arguments: [OSCArgument] = [.string(url(of: subscriber.target)), .string(subscriber.feedback.rawValue),
                                        .int32(Int32(clamping: subscriber.lease.components.seconds))]
        if let selection = subscriber.selection { arguments.append(.string(selection.pattern)) }
        return OSCMessage("/subscribed", arguments)
    }

    private func url(of target: OSCPeer) -> String { transport(to: target).url(of: target) }

    /// Drops ended leases and confirmation windows every `interval` while any subscription or
    /// pending confirmation exists; otherwise sleeps until one is added. Runs until cancelled.
    func sweepExpired(every interval: Duration) async {
        for await _ in expirable.stream {
            while hasExpirable {
                guard (try? await Task.sleep(for: interval)) != nil else { return }
                expire()
            }
        }
    }

    /// Whether any subscription or pending confirmation could expire.
    private var hasExpirable: Bool {
        registry.withRegistry { !$0.subscribers.isEmpty } || pendingConfirmationCount > 0
    }

    /// Drops subscriptions whose lease ended and confirmations that were not given in time.
    func expire() {
        let time = now()
        let expired = registry.withRegistry { $0.expire(at: time) }
        _ = confirmations.withLock { $0.expire(at: time) }
        forget(expired)
        for subscriber in expired {
            drops.log("expired", "subscription of \(subscriber.target) expired: its lease of \(subscriber.lease) was not renewed")
        }
    }

    /// A datagram to `peer` came back "port unreachable": nobody listens there, so its
    /// subscription (or pending confirmation) is dropped at once, freeing the slot.
    func dropUnreachable(_ peer: OSCPeer) {
        let dropped = registry.withRegistry { $0.drop(peer) }
        let pending = confirmations.withLock { $0.drop(peer) }
        if let dropped {
            forget([dropped])
            drops.log("unreachable", "dropped subscriber \(dropped.target): port unreachable")
        } else if pending != nil {
            drops.log("unreachable", "dropped the pending subscription of \(peer): port unreachable")
        }
    }

    /// Subscriptions awaiting their target's confirmation.
    var pendingConfirmationCount: Int { confirmations.withLock { $0.pending.count } }

    /// Queues feedback with `enqueue` (true: something was queued) and, when no flush is
    /// scheduled, schedules one.
    func enqueue(_ enqueue: (SharedSubscriberRegistry) -> Bool) {
        guard enqueue(registry) else { return }
        // Counted after the registry took it: a flush that reads the count takes the feedback.
        progress.withLock { $0.queued += 1 }
        guard !flushScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [self] in
            try? await Task.sleep(for: Self.flushDelay)
            flushScheduled.store(false, ordering: .releasing)
            flush()
        }
    }

    /// Runs `body` once every piece of feedback queued before now was sent: at once when none
    /// waits. `/sync` answers through it, so a client that reads `/synced` knows that the value
    /// feedback, terminal states and notifications its earlier requests queued (before they
    /// ended: the surface observes changes on the thread that makes them) left, to every
    /// subscriber. Any thread.
    func afterFlush(_ body: @escaping @Sendable () -> Void) {
        let now = progress.withLock { progress -> Bool in
            guard progress.sent < progress.queued else { return true }
            progress.waiters.append(FlushProgress.Waiter(through: progress.queued, body: body))
            return false
        }
        if now { body() }
    }

    /// Sends what is queued, then runs the `afterFlush` bodies it covered. In the flush task.
    private func flush() {
        let due = flushTurn.withLock { _ in
            let through = progress.withLock { $0.queued }
            let dropped = registry.flush { target, message in
                transport(to: target).send(OSCCodec.encode(message), to: target)
            }
            forget(dropped)
            for subscriber in dropped {
                drops.log("send failures", "dropped subscriber \(subscriber.target): sends kept failing")
            }
            return progress.withLock { $0.sent(through: through) }
        }
        for waiter in due { waiter.body() }
    }

    /// Sends a subscription's challenge to its target. On an exposed port it is outside the
    /// answer ratio of an unconfirmed source (the target may never have sent anything): its
    /// number is bounded by `SubscriptionConfirmations` (one per pending target).
    func sendChallenge(_ message: OSCMessage, to target: OSCPeer) {
        let packet = OSCCodec.encode(message)
        let sent = if let budgeted = transport as? BudgetedTransport {
            budgeted.sendOutsideRatio(packet, to: target)
        } else {
            transport.send(packet, to: target)
        }
        if !sent { logger.debug("could not send \(message.address) to \(target)") }
    }

    /// Sends one message to a subscription's target at once (its confirmation and snapshot).
    func send(_ message: OSCMessage, to target: OSCPeer) {
        if !transport(to: target).send(OSCCodec.encode(message), to: target) {
            logger.debug("could not send \(message.address) to \(target)")
        }
    }

    private func transport(to target: OSCPeer) -> any OSCTransport {
        transports.withLock { $0[target] } ?? transport
    }

    private func forget(_ subscribers: [SubscriberRegistry.Subscriber]) {
        guard !subscribers.isEmpty else { return }
        transports.withLock { transports in
            for subscriber in subscribers { transports[subscriber.target] = nil }
        }
    }
}

/// How far subscriber feedback was sent: `queued` and `sent` count enqueues that queued
/// something; `afterFlush` bodies wait until `sent` reaches the count they saw.
private struct FlushProgress {
    struct Waiter {
        let through: UInt64
        let body: @Sendable () -> Void
    }

    var queued: UInt64 = 0
    var sent: UInt64 = 0
    var waiters: [Waiter] = []

    /// Records a flush that took everything queued through `through`; returns the waiters it
    /// satisfied.
    mutating func sent(through: UInt64) -> [Waiter] {
        sent = max(sent, through)
        let due = waiters.filter { $0.through <= sent }
        waiters.removeAll { $0.through <= sent }
        return due
    }
}
