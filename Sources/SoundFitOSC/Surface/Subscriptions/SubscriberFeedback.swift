import Logging
import Synchronization

/// Subscriptions and the feedback sent to them. Messages queue per subscriber and are sent
/// shortly after the first one: bursts within the flush delay coalesce (latest value per
/// address wins). Subscription URLs are `osc.udp://`, so feedback goes out over the datagram
/// transport.
///
/// Thread rules: any thread except the JACK process callback; a flush runs in a short task.
final class SubscriberFeedback: Sendable {
    static let flushDelay: Duration = .milliseconds(5)

    let registry = SharedSubscriberRegistry()
    /// Where subscribers' messages are sent from.
    let transport: any OSCTransport
    private let logger: Logger
    /// Whether a flush of subscriber feedback is scheduled.
    private let flushScheduled = Atomic<Bool>(false)

    init(transport: any OSCTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// Queues feedback with `enqueue` (true: something was queued) and, when no flush is
    /// scheduled, schedules one.
    func enqueue(_ enqueue: (SharedSubscriberRegistry) -> Bool) {
        guard enqueue(registry) else { return }
        guard !flushScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [self] in
            try? await Task.sleep(for: Self.flushDelay)
            flushScheduled.store(false, ordering: .releasing)
            let dropped = registry.flush { peer, message in transport.send(OSCCodec.encode(message), to: peer) }
            for subscriber in dropped {
                logger.warning("dropped subscriber \(subscriber.target): sends kept failing")
            }
        }
    }

    /// Sends one message to a subscription's target at once (its confirmation and snapshot).
    func send(_ message: OSCMessage, to target: OSCPeer) {
        if !transport.send(OSCCodec.encode(message), to: target) {
            logger.debug("could not send \(message.address) to \(target)")
        }
    }

    /// Whether `target` is SoundFit's own endpoint (a subscription there would feed SoundFit
    /// its own feedback).
    func isOwnEndpoint(_ target: OSCPeer) -> Bool { transport.isOwnEndpoint(target) }
}
