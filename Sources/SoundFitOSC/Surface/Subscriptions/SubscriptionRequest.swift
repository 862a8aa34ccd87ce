import OSCCore

/// Which form of value feedback a subscriber receives.
public enum FeedbackForm: String, Sendable, CaseIterable {
    /// `<address> <value>` in native units (the default).
    case native
    /// `<address>/normalized ,f <position>` for faders.
    case normalized
    /// Both messages for each change.
    case both
}

/// Why a `/subscribe` or `/unsubscribe` was rejected. The description is the `/error` message.
public enum SubscriptionError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidURL(OSCURLError)
    case wrongArguments(address: String, typeTags: String)
    case unknownFeedbackForm(String)
    case full(capacity: Int)
    case notSubscribed(url: String)
    case anotherClients(url: String)
    /// The URL is SoundFit's own OSC port: SoundFit would send its feedback to itself.
    case ownSocket(url: String)
    /// The owner already holds `SubscriberRegistry.maximumPerOwner` subscriptions.
    case ownerFull(limit: Int)
    /// The URL's host is outside `--osc-allow`: feedback goes only to hosts it admits.
    case notAllowed(url: String)
    /// Too many subscriptions await their target's confirmation (in all, or of this owner).
    case confirmationsFull(limit: Int)
    /// A confirmation request went to that host too recently.
    case confirmationTooSoon(host: String, interval: Duration)
    /// `/subscribe/confirm` with a token no subscription awaits (expired, or never sent).
    case unknownToken
    /// `/subscribe/confirm` from another host than the subscription's target.
    case confirmationFromAnotherHost(url: String)
    /// The address pattern of a `/subscribe` is malformed or selects no parameter.
    case invalidPattern(String, reason: String)
    /// The target is subscribed over another transport (UDP vs a TCP or WebSocket connection
    /// from the same address and port): they are different endpoints, never one renewed as the other.
    case subscribedOverAnotherTransport(url: String)

    public var description: String {
        switch self {
        case .invalidURL(let error):
            error.description
        case .wrongArguments(let address, let typeTags):
            address == "/subscribe"
                ? "/subscribe takes [,s url] [,s native|normalized|both] [,s address_pattern], each at most once, got ,\(typeTags)"
                : "\(address) takes [,s url], got ,\(typeTags)"
        case .unknownFeedbackForm(let form):
            "/subscribe: unknown feedback form '\(form)'; expected native, normalized or both"
        case .full(let capacity):
            "subscriber limit reached (\(capacity)); unsubscribe another client first"
        case .notSubscribed(let url):
            "\(url) is not subscribed"
        case .anotherClients(let url):
            "\(url) was subscribed by another client; only that client or a client on the subscriber's host can change it"
        case .ownSocket(let url):
            "\(url) is SoundFit's own OSC port; subscribe the address your client listens on"
        case .ownerFull(let limit):
            "this client already holds \(limit) subscriptions, the most one client (address and port) may hold; unsubscribe one first"
        case .notAllowed(let url):
            "\(url) is not admitted by --osc-allow: feedback goes only to hosts it admits"
        case .confirmationsFull(let limit):
            "too many subscriptions await their target's confirmation (at most \(limit)); try again when they are confirmed or expired"
        case .confirmationTooSoon(let host, let interval):
            "a confirmation request went to \(host) less than \(interval.components.seconds) s ago; try again later"
        case .unknownToken:
            "no subscription awaits confirmation with that token (it expired, was confirmed already, or was never sent)"
        case .confirmationFromAnotherHost(let url):
            "the confirmation of \(url) must come from its host"
        case .invalidPattern(let pattern, let reason):
            "/subscribe: address pattern '\(pattern)': \(reason)"
        case .subscribedOverAnotherTransport(let url):
            "\(url) is subscribed over another transport (UDP vs a TCP or WebSocket connection from the same address and port); "
                + "unsubscribe it there first"
        }
    }
}

/// The arguments of `/subscribe [,s url] [,s native|normalized|both] [,s address_pattern]`, or
/// of `/unsubscribe [,s url]`. Strings and symbols are accepted; nothing else.
public struct SubscriptionRequest: Equatable, Sendable {
    /// Where feedback goes; nil means the sender's own address and port.
    public var url: OSCPeer?
    public var feedback: FeedbackForm
    /// The parameters followed; nil: every parameter.
    public var selection: ParameterSelection?

    public init(url: OSCPeer? = nil, feedback: FeedbackForm = .native, selection: ParameterSelection? = nil) {
        self.url = url
        self.feedback = feedback
        self.selection = selection
    }

    /// Parses `/subscribe` arguments: at most one each of a URL (it contains `://`, or is empty:
    /// the sender itself, so `/subscribe ss "" normalized` picks a form without naming a URL), an
    /// address pattern (it starts with `/`) and a feedback form, in any order.
    public init(subscribe arguments: [OSCArgument]) throws(SubscriptionError) {
        self.init()
        let strings = try Self.strings(arguments, address: "/subscribe")
        var seenURL = false, seenForm = false, seenPattern = false
        for text in strings {
            if text.isEmpty || text.contains("://") {
                guard !seenURL else { throw Self.wrongArguments("/subscribe", arguments) }
                seenURL = true
                url = try Self.url(text)
            } else if text.hasPrefix("/") {
                guard !seenPattern else { throw Self.wrongArguments("/subscribe", arguments) }
                seenPattern = true
                selection = try ParameterSelection(text)
            } else {
                guard !seenForm else { throw Self.wrongArguments("/subscribe", arguments) }
                seenForm = true
                guard let form = FeedbackForm(rawValue: text) else { throw .unknownFeedbackForm(text) }
                feedback = form
            }
        }
    }

    /// Parses `/unsubscribe` arguments: none, or a URL (empty: the sender itself). The feedback
    /// form is irrelevant here.
    public init(unsubscribe arguments: [OSCArgument]) throws(SubscriptionError) {
        self.init()
        let strings = try Self.strings(arguments, address: "/unsubscribe")
        guard strings.count <= 1 else { throw Self.wrongArguments("/unsubscribe", arguments) }
        if let text = strings.first { url = try Self.url(text) }
    }

    /// The subscriber a URL argument names; nil (the sender's own address and port) for `""`,
    /// so an empty URL is never a third party that must confirm.
    private static func url(_ text: String) throws(SubscriptionError) -> OSCPeer? {
        guard !text.isEmpty else { return nil }
        do throws(OSCURLError) { return try OSCPeer(oscURL: text) } catch { throw .invalidURL(error) }
    }

    private static func strings(_ arguments: [OSCArgument], address: String) throws(SubscriptionError) -> [String] {
        var strings: [String] = []
        for argument in arguments {
            switch argument {
            case .string(let text), .symbol(let text): strings.append(text)
            default: throw wrongArguments(address, arguments)
            }
        }
        return strings
    }

    private static func wrongArguments(_ address: String, _ arguments: [OSCArgument]) -> SubscriptionError {
        .wrongArguments(address: address, typeTags: OSCMessage(address, arguments).typeTags)
    }
}
