import OSCCore
import SoundFitModel

/// One message for one peer, as `drain()` returns them.
public struct OSCDelivery: Sendable, Equatable, CustomStringConvertible {
    public var peer: OSCPeer
    public var message: OSCMessage

    public init(_ peer: OSCPeer, _ message: OSCMessage) {
        self.peer = peer
        self.message = message
    }

    public var description: String { "\(peer) \(message)" }
}

/// Enqueueing and draining feedback. Each `enqueue…` returns true when the caller should
/// schedule a `drain()`: for the first message since the last drain, so one flush is pending at
/// a time however many changes arrive (the surface drains `SubscriberFeedback.flushDelay`, 5 ms,
/// after the first, which bounds the feedback rate to each subscriber at about 200 messages per
/// second per key).
extension SubscriberRegistry {
    /// Value feedback for an applied change: `<address> <value>` and/or
    /// `<address>/normalized ,f <position>`, per subscriber form, to every subscriber except the
    /// change's origin (nil for changes no client made: patch loads, session restores).
    @discardableResult
    public mutating func enqueueFeedback(_ descriptor: ParameterDescriptor, value: ParameterValue,
                                         origin: OSCPeer?) -> Bool {
        enqueue(origin: origin, address: descriptor.address) { form in
            var messages: [(FeedbackKey, OSCMessage)] = []
            if form != .normalized {
                messages.append((.value(descriptor.address), OSCMessage(descriptor.address, [value.oscArgument])))
            }
            if form != .native {
                messages.append((.normalized(descriptor.address), FaderTaper.message(value, for: descriptor)))
            }
            return messages
        }
    }

    /// A terminal state of a change: `/state ,s address ,s state <value> [,s error]` (native
    /// value, no request id: ids belong to the sender, which gets its own reports). Coalesced
    /// per address: a subscriber sees the latest terminal state of each parameter.
    @discardableResult
    public mutating func enqueueTerminalState(address: String, state: String, value: ParameterValue,
                                              error: String? = nil, origin: OSCPeer?) -> Bool {
        guard !subscribers.isEmpty else { return false }  // nobody to tell: build no message
        var arguments: [OSCArgument] = [.string(address), .string(state), value.oscArgument]
        if let error { arguments.append(.string(error)) }
        let message = OSCMessage("/state", arguments)
        return enqueue(origin: origin, address: address) { _ in [(.state(address), message)] }
    }

    /// A notification such as `/session ,s active …` or `/session/interrupted ,i 1`, coalesced
    /// per address and `distinction` (messages of one address that must not replace each other,
    /// such as one ear's `/test/result` and the other's, differ in it).
    @discardableResult
    public mutating func enqueueNotification(_ message: OSCMessage, origin: OSCPeer?, distinctBy distinction: String = "") -> Bool {
        enqueue(origin: origin, address: nil) { _ in [(.notification(message.address + distinction), message)] }
    }

    /// `/invalidated ,s address… ,s cause` to every subscriber: values it holds are stale.
    /// Coalesced per cause (a fixed vocabulary), so different events in one flush all arrive.
    @discardableResult
    public mutating func enqueueInvalidation(_ addresses: [String], cause: String) -> Bool {
        guard !subscribers.isEmpty else { return false }
        let message = OSCMessage("/invalidated", addresses.map { .string($0) } + [.string(cause)])
        return enqueue(origin: nil, address: nil) { _ in [(.notification("/invalidated \(cause)"), message)] }
    }

    /// Everything waiting, at most one message per (subscriber, key): subscribers in
    /// subscription order, each one's messages in the order their keys first became pending.
    public mutating func drain() -> [OSCDelivery] {
        flushRequested = false
        var deliveries: [OSCDelivery] = []
        for subscriber in subscribers {
            guard var queue = pending.removeValue(forKey: subscriber.target) else { continue }
            deliveries += queue.drain().map { OSCDelivery(subscriber.target, $0.value) }
        }
        return deliveries
    }

    /// Messages waiting for the next drain (bounded by subscribers × keys).
    public var pendingMessageCount: Int { pending.values.reduce(0) { $0 + $1.count } }

    /// The messages that bring a new subscriber in sync: each parameter's current value in the
    /// subscriber's form(s), in the given order.
    public static func snapshot(_ values: [(ParameterDescriptor, ParameterValue)],
                                feedback: FeedbackForm) -> [OSCMessage] {
        values.flatMap { descriptor, value -> [OSCMessage] in
            switch feedback {
            case .native: [OSCMessage(descriptor.address, [value.oscArgument])]
            case .normalized: [FaderTaper.message(value, for: descriptor)]
            case .both: [OSCMessage(descriptor.address, [value.oscArgument]), FaderTaper.message(value, for: descriptor)]
            }
        }
    }

    /// Queues `messages` for every subscriber but the origin that follows `address` (a
    /// parameter's; nil for notifications, which every subscriber gets).
    private mutating func enqueue(origin: OSCPeer?, address: String?,
                                  _ messages: (FeedbackForm) -> [(FeedbackKey, OSCMessage)]) -> Bool {
        var enqueued = false
        for subscriber in subscribers where subscriber.receivesChanges(from: origin) && subscriber.follows(address) {
            for (key, message) in messages(subscriber.feedback) {
                pending[subscriber.target, default: CoalescingQueue()].enqueue(message, for: key)
                enqueued = true
            }
        }
        guard enqueued, !flushRequested else { return false }
        flushRequested = true
        return true
    }
}
