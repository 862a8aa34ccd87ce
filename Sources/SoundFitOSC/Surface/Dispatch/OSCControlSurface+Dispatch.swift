import SoundFitModel

/// Receiving a packet and answering it: the ingress admits it, every message is routed through
/// the command table or the parameters, then the routes are performed in message order and the
/// packet's parameter sets are requested as one batch (a bundle lands in one audio cycle).
///
/// The packet is routed as a whole before anything is performed: atomic bundles (reject all when
/// one is invalid), address patterns and timetags fit in here without re-routing. A bundle with
/// a future timetag is scheduled after routing (`timing(of:routes:)`): its sets take effect in
/// the audio cycle that contains that moment.
extension OSCControlSurface {
    /// One received packet. Runs on the transport's receive thread, synchronously, so requests
    /// are accepted in the order they arrived.
    func receive(_ bytes: [UInt8], from sender: OSCSender) {
        switch ingress.admit(bytes, from: sender) {
        case .dropped:
            return
        case .undecodable(let reason):
            replies.reject("", reason, to: sender)
        case .packet(let packet):
            dispatch(packet, from: sender)
        }
    }

    /// Routes and performs one decoded packet.
    func dispatch(_ packet: OSCPacket, from sender: OSCSender) {
        guard !packet.messages.isEmpty else {
            // Every request is answered: a bundle with nothing in it too.
            replies.reject("", "empty bundle: nothing to do", to: sender)
            return
        }
        let routes = packet.messages.map(route)
        let time: EngineTime?
        switch timing(of: packet, routes: routes) {
        case .now: time = nil
        case .at(let moment): time = moment
        case .refused(let address, let reason):
            replies.reject(address, reason, to: sender)
            return
        }
        var sets: [RoutedParameterRequest] = []
        for routed in routes {
            switch routed {
            case .reply:
                continue
            case .command(let command, let message):
                command.handle?(OSCCommandRequest(message: message, sender: sender, surface: self))
            case .query(let query):
                parameters.answer(query, to: sender)
            case .set(let request):
                sets.append(request)
            case .rejected(let address, let reason):
                replies.reject(address, reason, to: sender)
            }
        }
        guard !sets.isEmpty else { return }
        parameters.request(sets, from: sender, feedback: feedback, at: time)
    }

    /// Where `message` goes: nowhere if it can only be a reply, else a command of the table,
    /// else a parameter (native or fader form), else an `/error`.
    func route(_ message: OSCMessage) -> RoutedMessage {
        if OSCCommandTable.isReply(message) { return .reply }
        if let command = OSCCommandTable.command(at: message.address) { return .command(command, message) }
        return parameters.route(message)
    }
}
