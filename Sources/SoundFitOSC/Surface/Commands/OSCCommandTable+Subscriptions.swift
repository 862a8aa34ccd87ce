/// `/subscribe`, `/unsubscribe`.
extension OSCCommandTable {
    static let subscriptions = [subscribe, unsubscribe]

    /// Besides its own replies, `/subscribe` sends every parameter's value: those are requests
    /// too (a set), so they are not reply forms.
    static let subscribe = OSCCommand(
        OSCCommandDescription(
            "/subscribe", section: .subscriptions,
            summary: "Keeps a surface in sync. Subscribing an address again changes its feedback form. "
                + "At most \(SubscriberRegistry.defaultCapacity) subscriptions; a subscriber whose sends fail "
                + "\(SubscriberRegistry.defaultMaximumConsecutiveFailures) times in a row is dropped.",
            arguments: [
                Arg("s", "url", "`osc.udp://host:port` to send to (IPv4 address or localhost); default: the sender's address and port "
                    + "(over TCP: the sender's connection, until it closes).",
                    optional: true),
                Arg("s", "feedback", "`native` (default): `<address> <value>`; `normalized`: `<address>/normalized ,f position`; `both`.",
                    optional: true),
            ],
            reply: "`/subscribed ,s url ,s feedback`, then the current value of every parameter in that form "
                + "(a snapshot). Afterwards: value feedback for every applied change made by another client "
                + "(never echoed to the client that made it), the terminal `/state` of those changes, and "
                + "session changes. Feedback is coalesced per subscriber: the latest value of each address wins, "
                + "so a flood of changes never builds a queue.",
            errors: [
                "the URL is malformed, not `osc.udp://` (feedback is sent over TCP only to a client subscribed over its "
                    + "own connection; Unix sockets are not supported), names a host "
                    + "that is not an IPv4 address or localhost, or a port outside 1…65535",
                "unknown feedback form (expected native, normalized or both)",
                "the subscriber limit is reached",
                "the URL is SoundFit's own OSC port (SoundFit would send its feedback to itself)",
                "the URL was subscribed by another client: only that client, or a client on the subscriber's host, "
                    + "may change it",
            ],
            examples: [
                "oscdump 9000 &",
                "oscsend localhost 7700 /subscribe s osc.udp://127.0.0.1:9000",
                "oscsend localhost 7700 /subscribe ss osc.udp://127.0.0.1:9000 normalized",
            ]),
        requests: [OSCMessageForm("/subscribe", .any)],
        replies: [OSCMessageForm("/subscribed", .any)] + sessionReplies,
        handle: answerSubscribe)

    /// `/subscribe [,s url] [,s native|normalized|both]` → `/subscribed ,s url ,s feedback`, then
    /// every parameter's current value (the snapshot that brings a surface in sync).
    private static func answerSubscribe(_ request: OSCCommandRequest) {
        let feedback = request.surface.feedback
        do throws(SubscriptionError) {
            let subscription = try SubscriptionRequest(subscribe: request.arguments)
            let subscriber = try feedback.subscribe(from: request.sender, subscription)
            let confirmation = feedback.subscribedMessage(subscriber)
            feedback.send(confirmation, to: subscriber.target)
            // A subscription for another URL is confirmed to its sender too.
            if subscriber.target != request.sender.peer { request.reply(confirmation) }
            let values = request.surface.parameters.currentValues()
            for snapshot in SubscriberRegistry.snapshot(values, feedback: subscriber.feedback) {
                feedback.send(snapshot, to: subscriber.target)
            }
            feedback.send(request.surface.sessionMessage(), to: subscriber.target)
        } catch {
            request.reject(error.description)
        }
    }

    static let unsubscribe = OSCCommand(
        OSCCommandDescription(
            "/unsubscribe", section: .subscriptions,
            summary: "Stops feedback.",
            arguments: [
                Arg("s", "url", "the subscription to remove; default: the sender's own subscription and the ones it made.",
                    optional: true),
            ],
            reply: "`/unsubscribed ,s url` for each removed subscription.",
            errors: [
                "not subscribed",
                "the URL was subscribed by another client (only that client, or a client on the subscriber's host, "
                    + "may remove it)",
                "the URL is malformed",
            ],
            examples: ["oscsend localhost 7700 /unsubscribe s osc.udp://127.0.0.1:9000"]),
        requests: [OSCMessageForm("/unsubscribe", .any)],
        replies: [OSCMessageForm("/unsubscribed", .any)],
        handle: answerUnsubscribe)

    /// `/unsubscribe [,s url]` → `/unsubscribed ,s url` for each subscription removed.
    private static func answerUnsubscribe(_ request: OSCCommandRequest) {
        do throws(SubscriptionError) {
            let subscription = try SubscriptionRequest(unsubscribe: request.arguments)
            for reply in try request.surface.feedback.unsubscribe(from: request.sender, url: subscription.url) {
                request.reply(reply)
            }
        } catch {
            request.reject(error.description)
        }
    }
}
