import OSCCore
import SoundFitModel
import Synchronization

/// A `SubscriberRegistry` shared between the OSC receive thread (subscribe, unsubscribe,
/// changes from requests) and the tasks that report applied changes.
///
/// Thread rules: every member may be called from any thread except the JACK process callback.
/// The lock is held only for the registry's pure transitions, never while sending.
public final class SharedSubscriberRegistry: Sendable {
    private let registry: Mutex<SubscriberRegistry>

    public init(_ registry: SubscriberRegistry = SubscriberRegistry()) {
        self.registry = Mutex(registry)
    }

    /// Runs `body` on the registry under the lock. Keep it short; send nothing inside.
    public func withRegistry<Result: Sendable, Failure: Error>(
        _ body: (inout SubscriberRegistry) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try registry.withLock { (registry: inout SubscriberRegistry) throws(Failure) -> Result in try body(&registry) }
    }

    /// See `SubscriberRegistry.subscribe(from:_:at:)`.
    @discardableResult
    public func subscribe(from sender: OSCPeer, _ request: SubscriptionRequest = SubscriptionRequest(),
                          at now: Duration = .zero) throws(SubscriptionError) -> SubscriberRegistry.Subscriber {
        try withRegistry { (registry: inout SubscriberRegistry) throws(SubscriptionError) in
            try registry.subscribe(from: sender, request, at: now)
        }
    }

    /// See `SubscriberRegistry.unsubscribe(from:url:)`.
    @discardableResult
    public func unsubscribe(from sender: OSCPeer, url: OSCPeer? = nil) throws(SubscriptionError) -> [SubscriberRegistry.Subscriber] {
        try withRegistry { (registry: inout SubscriberRegistry) throws(SubscriptionError) in
            try registry.unsubscribe(from: sender, url: url)
        }
    }

    /// See `SubscriberRegistry.enqueueFeedback`. True: schedule a `flush`.
    @discardableResult
    public func enqueueFeedback(_ descriptor: ParameterDescriptor, value: ParameterValue, origin: OSCPeer?) -> Bool {
        withRegistry { $0.enqueueFeedback(descriptor, value: value, origin: origin) }
    }

    /// See `SubscriberRegistry.enqueueTerminalState`. True: schedule a `flush`.
    @discardableResult
    public func enqueueTerminalState(address: String, state: String, value: ParameterValue,
                                     error: String? = nil, origin: OSCPeer?) -> Bool {
        withRegistry { $0.enqueueTerminalState(address: address, state: state, value: value, error: error, origin: origin) }
    }

    /// See `SubscriberRegistry.enqueueNotification`. True: schedule a `flush`.
    @discardableResult
    public func enqueueNotification(_ message: OSCMessage, origin: OSCPeer?, distinctBy distinction: String = "") -> Bool {
        withRegistry { $0.enqueueNotification(message, origin: origin, distinctBy: distinction) }
    }

    /// See `SubscriberRegistry.enqueueInvalidation`. True: schedule a `flush`.
    @discardableResult
    public func enqueueInvalidation(_ addresses: [String], cause: String) -> Bool {
        withRegistry { $0.enqueueInvalidation(addresses, cause: cause) }
    }

    /// Drains the registry, sends each message with `send` outside the lock (true = sent), and
    /// records the results. Returns the subscribers dropped for failing too often, for a log
    /// line. Call it from one flush task at a time.
    @discardableResult
    public func flush(send: (OSCPeer, OSCMessage) -> Bool) -> [SubscriberRegistry.Subscriber] {
        let deliveries = withRegistry { $0.drain() }
        let results = deliveries.map { (peer: $0.peer, sent: send($0.peer, $0.message)) }
        return withRegistry { registry in
            results.compactMap { registry.recordSend(to: $0.peer, succeeded: $0.sent) }
        }
    }

    /// The current subscriptions, in subscription order.
    public var subscribers: [SubscriberRegistry.Subscriber] { withRegistry { $0.subscribers } }
}
