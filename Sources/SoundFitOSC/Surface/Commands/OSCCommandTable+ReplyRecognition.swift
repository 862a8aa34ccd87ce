import OSCCore

/// Recognising SoundFit's own replies when they arrive, so they are never answered in turn.
///
/// An OSC server that answered replies would bounce messages with any other server that does
/// the same — SoundFit included: one `/subscribe` aimed at SoundFit's own port, or one packet
/// with a forged source, would start an exchange that never ends (`/error` answering `/error`).
/// So a message that matches a reply form of the table and no request form at its address is
/// dropped without an answer. Some addresses only ever carry replies (`/error`, `/pong`, …);
/// some are a request without arguments and a reply with them (`/session`, `/status`,
/// `/patch/current`): there a malformed request (`/session ,i 1`) is no reply form, and is
/// answered with `/error`.
extension OSCCommandTable {
    /// Whether `message` can only be one of SoundFit's replies (or another server's reply of the
    /// same form), and must therefore not be answered.
    static func isReply(_ message: OSCMessage) -> Bool {
        guard let forms = formsByAddress[message.address] else { return false }
        return forms.replies.contains { $0.matches(message) } && !forms.requests.contains { $0.matches(message) }
    }

    /// The request and reply forms of the table, by address (only addresses that have replies).
    private static let formsByAddress: [String: (requests: [OSCMessageForm], replies: [OSCMessageForm])] = {
        var forms: [String: (requests: [OSCMessageForm], replies: [OSCMessageForm])] = [:]
        for form in entries.flatMap(\.replyForms) {
            forms[form.address, default: ([], [])].replies.append(form)
        }
        for form in entries.flatMap(\.requestForms) where forms[form.address] != nil {
            forms[form.address]?.requests.append(form)
        }
        return forms
    }()
}
