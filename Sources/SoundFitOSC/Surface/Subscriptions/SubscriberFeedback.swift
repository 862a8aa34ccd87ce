import Logging
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

    let registry = SharedSubscriberRegistry()
    /// The datagram transport: where `osc.udp://` subscriptions are sent from.
    let transport: any OSCTransport
    private let logger: Logger
    /// The transport of each subscription that is not the datagram transport, by target.
    private let transports = Mutex<[OSCPeer: any OSCTransport]>([:])
    /// Whether a flush of subscriber feedback is scheduled.
    private let flushScheduled = Atomic<Bool>(false)

    init(transport: any OSCTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// Subscribes `sender` (or the request's URL); see `SubscriberRegistry.subscribe(from:_:)`.
    /// A URL naming SoundFit's own endpoint is refused: SoundFit would feed itself its feedback.
    func subscribe(from sender: OSCSender,
                   _ request: SubscriptionRequest) throws(SubscriptionError) -> SubscriberRegistry.Subscriber {
        if let url = request.url, transport.isOwnEndpoint(url) { throw .ownSocket(url: url.oscURL) }
        let target = request.url ?? sender.peer
        let route: (any OSCTransport)? = request.url == nil && sender.transport !== transport ? sender.transport : nil
        // Recorded first, so a flush racing with the subscription already sends over its transport.
        let previous = transports.withLock { transports in
            let previous = transports[target]
            transports[target] = route
            return previous
        }
        do {
            return try registry.subscribe(from: sender.peer, request)
        } catch {
            transports.withLock { $0[target] = previous }
            throw error
        }
    }

    /// Removes subscriptions; see `SubscriberRegistry.unsubscribe(from:url:)`. Returns each
    /// removed subscription's `/unsubscribed` reply.
    func unsubscribe(from sender: OSCSender, url: OSCPeer?) throws(SubscriptionError) -> [OSCMessage] {
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

    /// `/subscribed ,s url ,s feedback`, the URL with the scheme of the transport the
    /// subscription is sent over (`osc.tcp://` for a client subscribed over its connection).
    func subscribedMessage(_ subscriber: SubscriberRegistry.Subscriber) -> OSCMessage {
        OSCMessage("/subscribed", [.string(url(of: subscriber.target)), .string(subscriber.feedback.rawValue)])
    }

    private func url(of target: OSCPeer) -> String { transport(to: target).url(of: target) }

    /// Queues feedback with `enqueue` (true: something was queued) and, when no flush is
    /// scheduled, schedules one.
    func enqueue(_ enqueue: (SharedSubscriberRegistry) -> Bool) {
        guard enqueue(registry) else { return }
        guard !flushScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [self] in
            try? await Task.sleep(for: Self.flushDelay)
            flushScheduled.store(false, ordering: .releasing)
            let dropped = registry.flush { target, message in
                transport(to: target).send(OSCCodec.encode(message), to: target)
            }
            forget(dropped)
            for subscriber in dropped {
                logger.warning("dropped subscriber \(subscriber.target): sends kept failing")
            }
        }
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
