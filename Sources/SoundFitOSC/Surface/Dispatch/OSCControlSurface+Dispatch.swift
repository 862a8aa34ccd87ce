import OSCCore
import SoundFitModel

/// Receiving a packet and answering it: the ingress admits it, every message is routed through
/// the command table or the parameters, then the routes are performed in message order and the
/// packet's parameter sets are requested as one batch (a bundle lands in one audio cycle).
///
/// The packet is routed as a whole before anything is performed. A bundle is atomic: when one
/// of its elements is rejected, nothing in it is performed, and one `/error` names the element.
/// A bundle with a future timetag is scheduled after routing (`timing(of:routes:)`): its sets
/// take effect in the audio cycle that contains that moment.
extension OSCControlSurface {
    /// One received packet. Runs on the transport's receive thread, synchronously, so requests
    /// are accepted in the order they arrived. Its source's work budget (`SourceWorkBudgets`)
    /// is charged the thread time (CPU time) it took; a source over budget is not handled.
    func receive(_ bytes: [UInt8], from sender: OSCSender) {
        let source = sender.peer
        let admission = workBudgets.withLock { $0.admit(source, at: ContinuousClock.now - Self.workClockOrigin) }
        guard admission == .handle else {
            throttled.log("work", "dropped OSC packets from \(sender.peer): over its share of the "
                + "receive thread (\(Int(SourceWorkBudgets.defaultShare * 100)) %, costly requests such as large bundles of patterns)")
            if admission == .refuse {
                replies.reject("", "packets from this client take more than their share of SoundFit's time; "
                    + "dropped until it recovers (send fewer or cheaper requests)", to: sender)
            }
            return
        }
        let start = ThreadTime.now()
        switch ingress.admit(bytes, from: sender) {
        case .dropped:
            break
        case .undecodable(let reason):
            replies.reject("", reason, to: sender)
        case .packet(let packet):
            dispatch(packet, from: sender)
        }
        let work = ThreadTime.now() - start
        workBudgets.withLock { $0.charge(work, to: source) }
    }

    /// The origin of the work budgets' times.
    static let workClockOrigin = ContinuousClock.now

    /// A packet the transport discarded for its size. Over a connection (TCP) the sender is
    /// the connection's peer, never a forged source, so it is told; a datagram's is not.
    func oversized(_ size: Int, from sender: OSCSender) {
        ingress.oversized(size, from: sender.peer, limit: Self.maximumPacketBytes)
        guard sender.transport.isConnectionOriented, ingress.allowList.allows(sender.peer) else { return }
        replies.reject("", "packet of \(size) bytes discarded: the limit is \(Self.maximumPacketBytes) bytes", to: sender)
    }

    /// Routes and performs one decoded packet.
    func dispatch(_ packet: OSCPacket, from sender: OSCSender) {
        guard case .bundle = packet else {
            // A lone message: within every per-packet bound, and no timetag to read (at once).
            perform(packet.messages.map { route($0, from: sender) }, from: sender, at: nil)
            return
        }
        let messages = packet.messages
        guard !messages.isEmpty else {
            // Every request is answered: a bundle with nothing in it too.
            replies.reject("", "empty bundle: nothing to do", to: sender)
            return
        }
        // Bounded work per packet: each message costs routing, an address pattern matching it
        // against every parameter (bundles of 511–1 023 patterns took 54–85 ms each).
        guard messages.count <= Self.maximumMessagesPerPacket else {
            replies.reject("", "bundle of \(messages.count) messages: at most \(Self.maximumMessagesPerPacket) per packet; "
                + "nothing in the bundle was applied", to: sender)
            return
        }
        let patterns = messages.count(where: { OSCAddressPattern.isPattern($0.address) })
        guard patterns <= Self.maximumPatternMessagesPerPacket else {
            replies.reject("", "bundle of \(patterns) address patterns: at most \(Self.maximumPatternMessagesPerPacket) "
                + "per packet; nothing in the bundle was applied", to: sender)
            return
        }
        let routes = messages.map { route($0, from: sender) }
        if let rejection = Self.firstRejection(in: routes) {
            replies.reject(rejection.address, "bundle element \(rejection.element): \(rejection.reason); "
                + "nothing in the bundle was applied", to: sender)
            return
        }
        switch timing(of: packet, routes: routes) {
        case .now:
            perform(routes, from: sender, at: nil)
        case .at(let moment):
            perform(routes, from: sender, at: moment)
        case .refused(let address, let reason):
            replies.reject(address, reason, to: sender)
        }
    }

    /// Performs routed messages in order; their parameter sets are requested together at the end,
    /// to take effect at `time` (nil: now). Each set is under way (`pending`) from its place in
    /// the packet, so a `/sync` after it in the same bundle waits for it.
    private func perform(_ routes: [RoutedMessage], from sender: OSCSender, at time: EngineTime?) {
        var sets: [(ParameterSet, PendingRequests.Ticket)] = []
        for routed in routes {
            switch routed {
            case .reply:
                continue
            case .command(let work):
                work()
            case .query(let query):
                parameters.answer(query, to: sender)
            case .queries(let queries):
                for query in queries { parameters.answer(query, to: sender) }
            case .set(let request):
                sets.append((request, pending.begin(sender)))
            case .sets(let requests):
                sets += requests.map { ($0, pending.begin(sender)) }
            case .rejected(let address, let reason, let snapBack):
                replies.reject(address, reason, to: sender)
                if let snapBack { parameters.snapBack(snapBack, to: sender) }
            }
        }
        guard !sets.isEmpty else { return }
        parameters.request(sets, from: sender, feedback: feedback, at: time)
    }

    /// Where `message` goes: nowhere if it can only be a reply, else a command of the table
    /// (checked now, performed later), else a parameter (native or fader form, an address or an
    /// address pattern), else an `/error`.
    func route(_ message: OSCMessage, from sender: OSCSender) -> RoutedMessage {
        if OSCCommandTable.isReply(message) { return .reply }
        if let command = OSCCommandTable.command(at: message.address), let prepare = command.prepare {
            switch prepare(OSCCommandRequest(message: message, sender: sender, surface: self)) {
            case .perform(let work): return .command(work)
            case .reject(let reason): return .rejected(address: message.address, reason: reason)
            }
        }
        return parameters.route(message)
    }

    /// The first rejected element of a bundle (1-based, counting the messages of nested bundles
    /// in order), with its address and reason.
    private static func firstRejection(in routes: [RoutedMessage])
        -> (element: Int, address: String, reason: String, snapBack: ParameterQuery?)? {
        for (index, routed) in routes.enumerated() {
            if case .rejected(let address, let reason, let snapBack) = routed { return (index + 1, address, reason, snapBack) }
        }
        return nil
    }
}
