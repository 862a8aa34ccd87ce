/// `/subscribe`, `/subscribe/confirm`, `/unsubscribe`.
extension OSCCommandTable {
    static let subscriptions = [subscribe, confirmSubscription, unsubscribe]

    /// Besides its own replies, `/subscribe` sends every parameter's value: those are requests
    /// too (a set), so they are not reply forms. The challenge it sends a third party is
    /// registered as a reply form: a SoundFit that receives one never answers it.
    static let subscribe = OSCCommand(
        OSCCommandDescription(
            "/subscribe", section: .subscriptions,
            summary: "Keeps a surface in sync for a lease of \(SubscriberRegistry.defaultLease.components.seconds) s "
                + "(`--subscription-lease`): subscribing again renews the lease (and may change the feedback form), "
                + "so a surface re-subscribes about every \(SubscriberRegistry.defaultLease.components.seconds / 2) s; "
                + "a subscription not renewed in time is dropped. At most \(SubscriberRegistry.defaultCapacity) "
                + "subscriptions, \(SubscriberRegistry.defaultMaximumPerOwner) per client (address and port). A "
                + "subscriber whose port is unreachable (ICMP port unreachable) is dropped at once, one whose sends "
                + "fail \(SubscriberRegistry.defaultMaximumConsecutiveFailures) times in a row too. "
                + "A URL other than the requester's own address and port must be confirmed by its target first "
                + "(feedback is a set for an OSC server there, another SoundFit too): SoundFit sends it only "
                + "`/subscribe/challenge ,s token` (64 bytes) and nothing else until the target's host answers "
                + "`/subscribe/confirm ,s token` from any port (see below; with `oscdump`, send the token back with "
                + "`oscsend`); at most \(SubscriptionConfirmations.defaultCapacity) subscriptions await confirmation "
                + "(\(SubscriptionConfirmations.defaultMaximumPerOwner) per client), each for "
                + "\(SubscriptionConfirmations.defaultWindow.components.seconds) s, one challenge per second to another "
                + "host than the requester's, and repeating the `/subscribe` sends no second challenge. A client "
                + "subscribing its own address and port (no URL) needs no confirmation, except on an exposed port "
                + "(see Security), where every target outside 127.0.0.0/8 confirms.",
            arguments: [
                Arg("s", "url", "`osc.udp://host:port` to send to (IPv4 address or localhost); default, or `\"\"`: the sender's address and port "
                    + "(over TCP: the sender's connection, until it closes), which needs no confirmation. A URL naming the sender's own address and port is its own only when the request came over UDP. Its host must be admitted by `--osc-allow`.",
                    optional: true),
                Arg("s", "feedback", "`native` (default): `<address> <value>`; `normalized`: `<address>/normalized ,f position`; `both`.",
                    optional: true),
                Arg("s", "address_pattern", "an OSC address pattern starting with `/` (`/filter`, `/filter/*`, "
                    + "`/{filter,output}`): the subscription follows only the parameters it selects, as `/list ,s pattern` "
                    + "lists them (values, normalized values and `/state` reports); session, patch and other notifications "
                    + "still come. Default: every parameter. The three arguments may come in any order.", optional: true),
            ],
            reply: "`/subscribed ,s url ,s feedback ,i lease_seconds [,s address_pattern]`, then the current value of every "
                + "followed parameter in that form "
                + "(a snapshot; a renewal of a URL subscription gets no second snapshot). Afterwards: value feedback for every "
                + "applied change made by another client (never echoed to the client that made it: a change's client is the "
                + "address and port it came from, and a subscription neither targeting nor subscribed from that address and "
                + "port gets it; so a client that sends from one port and subscribed another port of its own from the sending "
                + "port does not see its own changes there: subscribe that port from itself), the terminal `/state` of "
                + "those changes, and session changes. Feedback is coalesced per subscriber: the latest value of each address "
                + "wins, so a flood of changes never builds a queue. For a URL on another host: "
                + "`/subscribe/pending ,s url ,s feedback ,i seconds_to_confirm` to the requester, and "
                + "`/subscribe/challenge ,s token` to the URL; `/subscribed` and the snapshot follow the confirmation.",
            errors: [
                "the URL is malformed, not `osc.udp://` (feedback is sent over TCP only to a client subscribed over its "
                    + "own connection; Unix sockets are not supported), names a host "
                    + "that is not an IPv4 address or localhost, or a port outside 1…65535",
                "unknown feedback form (expected native, normalized or both)",
                "a malformed address pattern, or one that selects no parameter; an argument given twice",
                "the subscriber limit is reached, or this client already holds \(SubscriberRegistry.defaultMaximumPerOwner)",
                "the URL is SoundFit's own OSC port (SoundFit would send its feedback to itself)",
                "the URL's host is not admitted by `--osc-allow`",
                "the URL was subscribed by another client: only that client, or a client on the subscriber's host, "
                    + "may change it",
                "too many subscriptions await confirmation, or a challenge went to that host less than a second ago",
                "the target is subscribed over another transport (UDP vs a TCP or WebSocket connection from the same "
                    + "address and port: different endpoints)",
            ],
            examples: [
                "oscdump 9000 &",
                "oscsend localhost 7700 /subscribe s osc.udp://127.0.0.1:9000   # oscdump prints /subscribe/challenge s TOKEN: "
                    + "send it back with /subscribe/confirm",
                "oscsend localhost 7700 /subscribe ss osc.udp://127.0.0.1:9000 normalized",
                "oscsend localhost 7700 /subscribe ss osc.udp://127.0.0.1:9000 /filter",
                "oscsend localhost 7700 /subscribe ss \"\" normalized   # \"\": the sender itself (a surface that listens on its sending port)",
            ]),
        requests: [OSCMessageForm("/subscribe", .any)],
        replies: [OSCMessageForm("/subscribed", .any), OSCMessageForm("/subscribe/pending", .any),
                  OSCMessageForm("/subscribe/challenge", .any)] + sessionReplies,
        prepare: prepareSubscribe)

    /// `/subscribe [,s url] [,s native|normalized|both] [,s pattern]` → `/subscribed ,s url ,s feedback
    /// ,i lease [,s pattern]`, then every followed parameter's current value (the snapshot that brings a surface in sync); for a
    /// third party, `/subscribe/pending` and a challenge to the target instead.
    private static func prepareSubscribe(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let subscription: SubscriptionRequest
        do throws(SubscriptionError) {
            subscription = try SubscriptionRequest(subscribe: request.arguments)
        } catch {
            return .reject(error.description)
        }
        return .perform { answerSubscribe(request, subscription) }
    }

    private static func answerSubscribe(_ request: OSCCommandRequest, _ subscription: SubscriptionRequest) {
        let feedback = request.surface.feedback
        do throws(SubscriptionError) {
            switch try feedback.subscribe(from: request.sender, subscription) {
            case .subscribed(let subscriber, let renewed):
                if subscriber.target == request.sender.peer {
                    sendSnapshot(to: subscriber, surface: request.surface)
                } else {
                    // A subscription for another URL is confirmed to its sender too; the URL gets
                    // its snapshot once, not at every renewal.
                    request.reply(feedback.subscribedMessage(subscriber))
                    if !renewed { sendSnapshot(to: subscriber, surface: request.surface) }
                }
            case .pending(let pending, let challenge, let reply):
                if let challenge { feedback.sendChallenge(challenge, to: pending.target) }
                request.reply(reply)
            }
        } catch {
            request.reject(error.description)
        }
    }

    /// `/subscribed`, every parameter's value in the subscriber's form, and `/session`.
    private static func sendSnapshot(to subscriber: SubscriberRegistry.Subscriber, surface: OSCControlSurface) {
        surface.feedback.send(surface.feedback.subscribedMessage(subscriber), to: subscriber.target)
        let values = surface.parameters.currentValues().filter { subscriber.follows($0.0.address) }
        for snapshot in SubscriberRegistry.snapshot(values, feedback: subscriber.feedback) {
            surface.feedback.send(snapshot, to: subscriber.target)
        }
        surface.feedback.send(surface.sessionMessage(), to: subscriber.target)
    }

    static let confirmSubscription = OSCCommand(
        OSCCommandDescription(
            "/subscribe/confirm", section: .subscriptions,
            summary: "Confirms a subscription another client asked for this host: the target echoes the token of the "
                + "`/subscribe/challenge ,s token` it received, from its own host (any port), within "
                + "\(SubscriptionConfirmations.defaultWindow.components.seconds) s.",
            arguments: [Arg("s", "token", "the token of the challenge.")],
            reply: "`/subscribed ,s url ,s feedback ,i lease_seconds` and the snapshot to the subscribed URL (and "
                + "`/subscribed` to the confirming sender, when it is another port).",
            errors: [
                "no subscription awaits confirmation with that token (expired, already confirmed, never sent)",
                "the confirmation comes from another host than the subscription's target",
                "the subscriber limit is reached",
            ],
            examples: ["oscsend localhost 7700 /subscribe/confirm s 5f0c…    # the token from /subscribe/challenge"]),
        requests: [OSCMessageForm("/subscribe/confirm", .any)],
        replies: [OSCMessageForm("/subscribed", .any)],
        prepare: prepareConfirm)

    /// `/subscribe/confirm ,s token` → `/subscribed` and the snapshot to the confirmed target.
    private static func prepareConfirm(_ request: OSCCommandRequest) -> OSCCommandPlan {
        guard request.arguments.count == 1, case .string(let token) = request.arguments[0] else {
            return .reject("/subscribe/confirm takes ,s token")
        }
        return .perform {
            let feedback = request.surface.feedback
            do throws(SubscriptionError) {
                let subscriber = try feedback.confirm(token, from: request.sender)
                sendSnapshot(to: subscriber, surface: request.surface)
                if subscriber.target != request.sender.peer { request.reply(feedback.subscribedMessage(subscriber)) }
            } catch {
                request.reject(error.description)
            }
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
                "the sender's own address and port is subscribed over another transport (UDP vs a TCP or WebSocket "
                    + "connection)",
            ],
            examples: ["oscsend localhost 7700 /unsubscribe s osc.udp://127.0.0.1:9000"]),
        requests: [OSCMessageForm("/unsubscribe", .any)],
        replies: [OSCMessageForm("/unsubscribed", .any)],
        prepare: prepareUnsubscribe)

    /// `/unsubscribe [,s url]` → `/unsubscribed ,s url` for each subscription removed.
    private static func prepareUnsubscribe(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let subscription: SubscriptionRequest
        do throws(SubscriptionError) {
            subscription = try SubscriptionRequest(unsubscribe: request.arguments)
        } catch {
            return .reject(error.description)
        }
        return .perform {
            do throws(SubscriptionError) {
                for reply in try request.surface.feedback.unsubscribe(from: request.sender, url: subscription.url) {
                    request.reply(reply)
                }
            } catch {
                request.reject(error.description)
            }
        }
    }
}
