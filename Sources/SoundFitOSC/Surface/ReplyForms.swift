/// The messages SoundFit sends as answers, recognised when they arrive so they are never
/// answered in turn.
///
/// An OSC server that answered replies would bounce messages with any other server that does
/// the same — SoundFit included: one `/subscribe` aimed at SoundFit's own port, or one packet with
/// a forged source, would start an exchange that never ends (`/error` answering `/error`). So a
/// message that can only be a reply is dropped without an answer. Some addresses are a request
/// without arguments and a reply with them (`/session`, `/status`, `/patch/current`, `/state`).
enum ReplyForms {
    /// Addresses SoundFit only ever sends, whatever their arguments.
    static let replyOnlyAddresses: Set<String> = [
        "/error", "/pong", "/subscribed", "/unsubscribed", "/list/param", "/list/end",
        "/patch/item", "/patch/end", "/patch/saved", "/patch/deleted", "/profile/presets",
        "/session/interrupted",
    ]

    /// Addresses that are a query without arguments and a reply with them.
    static let repliesWithArguments: Set<String> = ["/session", "/status", "/patch/current"]

    /// Whether `message` can only be one of SoundFit's replies (or another server's reply of the
    /// same form), and must therefore not be answered.
    static func isReply(_ message: OSCMessage) -> Bool {
        if replyOnlyAddresses.contains(message.address) { return true }
        if repliesWithArguments.contains(message.address) { return !message.arguments.isEmpty }
        switch message.address {
        case "/state":
            // `/state ,s address ,s state <value> [,s error] [,i request_id]`.
            return message.arguments.count >= 2
        case "/config/delivery":
            // The reply `,s continuous ,f 0`: continuous delivery takes no settle time as a request.
            if message.arguments.count == 2, case .string("continuous") = message.arguments[0] { return true }
            return false
        default:
            return false
        }
    }
}
