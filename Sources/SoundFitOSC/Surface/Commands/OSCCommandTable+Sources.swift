import OSCCore

/// `/source/confirm`: a source proves it receives at its address, which an exposed port
/// requires before large answers (`SourceConfirmations`).
extension OSCCommandTable {
    static let sources = [confirmSource]

    /// The refusal of a large answer to an unconfirmed source: short, so that it fits within
    /// the answer ratio of most requests (when it does not, the ratio drops it).
    static let unconfirmedSourceReason = "unconfirmed source: send /source/confirm first, or use TCP"

    /// Refuses `request` when its answer is large and its sender has not confirmed its address
    /// on an exposed port (`OSCControlSurface.isConfirmed(_:)`); nil when it may be answered.
    static func refusalOfLargeAnswer(to request: OSCCommandRequest) -> OSCCommandPlan? {
        request.surface.isConfirmed(request.sender) ? nil : .reject(unconfirmedSourceReason)
    }

    static let confirmSource = OSCCommand(
        OSCCommandDescription(
            "/source/confirm", section: .discovery,
            summary: "Confirms that the sender's address receives what SoundFit sends it. On an exposed port "
                + "(see Security) a source that has not confirmed is answered at most "
                + "\(SourceBudgets.answerRatio)× the bytes it sent, and large answers (`/list`, `/status`, "
                + "`/patch/list`, `/response`, `/personalization/gains`, `/meters/subscribe`) are refused: without an argument SoundFit sends "
                + "`/source/challenge ,s token` to the sender's address (60 bytes, 3× this request); echoing the token "
                + "from that address (any port) within \(SourceConfirmations.tokenWindow.components.seconds) s confirms "
                + "the address until \(SourceConfirmations.defaultLifetime.components.seconds) s pass without a packet "
                + "from it. Confirming a subscription's challenge (`/subscribe/confirm`) confirms its target's address too. "
                + "On a loopback port, from 127.0.0.1, and over TCP or WebSocket every sender is confirmed already.",
            arguments: [Arg("s", "token", "the token of `/source/challenge`; without it, asks for one.", optional: true)],
            reply: "`/source/challenge ,s token` when asking (unless confirmed already), `/source/confirmed ,s host` when "
                + "the address is confirmed.",
            errors: ["an argument that is not one string",
                     "the token is not this address's (wrong, sent from another host, or expired)"],
            examples: ["oscsend localhost 7700 /source/confirm   # on an exposed port, from the port that receives: "
                        + "/source/challenge s TOKEN",
                       "oscsend localhost 7700 /source/confirm s 5f0c…   # the token back"]),
        requests: [OSCMessageForm("/source/confirm", .any)],
        replies: [OSCMessageForm("/source/challenge", .any), OSCMessageForm("/source/confirmed", .any)],
        prepare: prepareConfirmSource)

    /// `/source/confirm` → `/source/challenge ,s token`; `/source/confirm ,s token` → `/source/confirmed ,s host`.
    private static func prepareConfirmSource(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let token: String?
        switch request.arguments.count {
        case 0: token = nil
        case 1:
            guard case .string(let text) = request.arguments[0] else { return .reject("expects [,s token]") }
            token = text
        default:
            return .reject("expects [,s token]")
        }
        let surface = request.surface
        let peer = request.sender.peer
        let confirmed = OSCMessage("/source/confirmed", [.string(peer.host)])
        return .perform {
            guard !surface.isConfirmed(request.sender) else { return request.reply(confirmed) }
            // Not confirmed: a datagram on an exposed port, so the surface is budgeted.
            guard let budgeted = surface.budgeted else { return request.reply(confirmed) }
            guard let token else {
                return request.reply(OSCMessage("/source/challenge", [.string(budgeted.confirmationToken(for: peer))]))
            }
            guard budgeted.confirm(token, from: peer) else { return request.reject("not this address's token") }
            request.reply(confirmed)
        }
    }
}

extension OSCControlSurface {
    /// Whether `sender` proved it receives at its address, so that it may get answers larger
    /// than `SourceBudgets.answerRatio` times its request: always on a loopback port and over a
    /// connection (TCP, WebSocket: its handshake proved it); on an exposed port, a datagram
    /// source once it confirmed (`/source/confirm`), and 127.0.0.1.
    func isConfirmed(_ sender: OSCSender) -> Bool {
        guard !sender.transport.isConnectionOriented, let budgeted else { return true }
        return budgeted.isConfirmed(sender.peer.address)
    }
}
