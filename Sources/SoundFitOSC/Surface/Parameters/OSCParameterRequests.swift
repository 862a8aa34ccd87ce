import OSCCore
import Synchronization
import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime

/// The surface's one door to the runtime's parameters: it routes parameter messages, answers
/// queries, requests the sets of one packet together, reports each request's update states
/// (`/state`), and turns applied changes into subscriber feedback. Nothing else in the surface
/// touches the runtime's parameter API.
///
/// Thread rules: `route`, `answer` and `request` run on a transport's receive thread (requests
/// are accepted in arrival order); states are reported from one task per request.
struct OSCParameterRequests: Sendable {
    let runtime: SoundFitRuntime
    let replies: OSCReplies
    /// Whether applied changes are persisted (the state keeper, once attached).
    let persistence = PersistenceStatus()
    /// Each request is under way here until its terminal state was sent (`/sync`).
    let pending: PendingRequests

    init(runtime: SoundFitRuntime, replies: OSCReplies, pending: PendingRequests) {
        self.runtime = runtime
        self.replies = replies
        self.pending = pending
    }

    /// A query (no argument) or a set (one value, and an optional int request id) of a
    /// parameter, in native units or as a fader position (`<address>/normalized`), at its
    /// address or through an address pattern; unknown addresses are rejected.
    func route(_ message: OSCMessage) -> RoutedMessage {
        // The fast path: an address is looked up as it is; only an unknown one can be a pattern.
        if let control = runtime.parameter(at: message.address) {
            return route(message, at: message.address, to: control, normalized: false)
        }
        if let address = FaderTaper.parameterAddress(forNormalized: message.address),
           let control = runtime.parameter(at: address) {
            return route(message, at: message.address, to: control, normalized: true)
        }
        if OSCAddressPattern.isPattern(message.address) { return routePattern(message) }
        return .rejected(address: message.address, reason: ParameterError.unknownAddress(message.address).description)
    }

    /// An address pattern selects parameters (and their `/normalized` forms), never commands.
    /// A query answers every match; a set goes to every match that accepts the value (kind,
    /// range, access) and the others are left alone; a set no match accepts is rejected with
    /// each match's reason.
    private func routePattern(_ message: OSCMessage) -> RoutedMessage {
        let matches: [(control: any ControlParameter, address: String, normalized: Bool)]
        do throws(OSCAddressPattern.Problem) {
            let pattern = try OSCAddressPattern(message.address)
            var found: [(control: any ControlParameter, address: String, normalized: Bool)] = []
            for control in runtime.parameters {
                let descriptor = control.descriptor
                if try pattern.matches(descriptor.address) {
                    found.append((control, descriptor.address, false))
                } else if pattern.partCount == OSCAddressPattern.partCount(of: descriptor.address) + 1,
                          try pattern.matches(descriptor.normalizedAddress) {
                    found.append((control, descriptor.normalizedAddress, true))
                }
            }
            guard !found.isEmpty else {
                var commands: [String] = []
                for address in OSCControlSurface.commandAddresses where try pattern.matches(address) {
                    commands.append(address)
                }
                return .rejected(address: message.address, reason: commands.isEmpty
                    ? "no parameter matches the address pattern \(message.address)"
                    : "address patterns select parameters only: send a command to its own address (\(commands.joined(separator: ", ")))")
            }
            matches = found
        } catch {
            return .rejected(address: message.address, reason: error.description)
        }
        var queries: [ParameterQuery] = [], sets: [ParameterSet] = [], refusals: [String] = []
        for match in matches {
            switch route(message, at: match.address, to: match.control, normalized: match.normalized) {
            case .query(let query): queries.append(query)
            case .set(let request): sets.append(request)
            case .rejected(_, let reason, _) where !refusals.contains(reason): refusals.append(reason)
            default: continue
            }
        }
        if !queries.isEmpty { return .queries(queries) }
        if !sets.isEmpty { return .sets(sets) }
        return .rejected(address: message.address,
                         reason: "no parameter matching \(message.address) accepts the value: \(refusals.joined(separator: "; "))")
    }

    /// `message` for one parameter, at `address` (the parameter's own or its `/normalized` form).
    private func route(_ message: OSCMessage, at address: String, to control: any ControlParameter,
                       normalized: Bool) -> RoutedMessage {
        let descriptor = control.descriptor
        var arguments = message.arguments
        if arguments.isEmpty {
            return .query(ParameterQuery(control: control, address: address, normalized: normalized))
        }
        let snapBack = normalized ? ParameterQuery(control: control, address: address, normalized: true) : nil
        // An optional trailing int is a request id, echoed in the /state reports.
        var requestID: Int32?
        if arguments.count == 2, case .int32(let id) = arguments[1] {
            requestID = id
            arguments.removeLast()
        }
        guard arguments.count == 1 else {
            return .rejected(address: address, reason: "\(address) takes one value (and an optional int request id), got \(message.arguments.count) arguments")
        }
        let value: ParameterValue
        var position: Float?
        do throws(ParameterError) {
            value = try descriptor.requestedValue(from: arguments[0], normalized: normalized)
            if normalized { position = try FaderTaper.position(from: arguments[0], for: descriptor) }
        } catch {
            // An out-of-range fader position is answered with the position to jump back to, too.
            let outOfRange = switch error {
            case .outOfRange, .notFinite: true
            default: false
            }
            return .rejected(address: address, reason: error.description, snapBack: outOfRange ? snapBack : nil)
        }
        // Whether the parameter takes the value now (range, session, interruption, can_enable), so
        // a bundle is rejected whole before anything of it is requested; the request checks again.
        do {
            try control.check(value)
        } catch {
            return .rejected(address: address, reason: "\(error)")
        }
        return .set(ParameterSet(control: control, address: address, value: value, requestID: requestID,
                                           position: position))
    }

    /// Whether `set` can take effect at a later moment (kernel parameters can; the processing
    /// session's take effect at once only).
    func isSchedulable(_ set: ParameterSet) -> Bool { runtime.isSchedulable(set.control) }

    /// Whether the engine has room for one more scheduled bundle now.
    var canSchedule: Bool { runtime.canSchedule }

    /// How many scheduled bundles can wait at once.
    var scheduleCapacity: Int { SoundFitRuntime.scheduleCapacity }

    /// Answers a query with the current value, in the form it was asked in.
    func answer(_ query: ParameterQuery, to sender: OSCSender) {
        let descriptor = query.control.descriptor
        do {
            let value = try query.control.currentValue()
            replies.send(query.normalized ? FaderTaper.message(value, for: descriptor)
                                          : OSCMessage(descriptor.address, [value.oscArgument]), to: sender)
        } catch {
            replies.reject(query.address, "\(error)", to: sender)
        }
    }

    /// Sends a fader the position of the parameter's current value, after its move was rejected,
    /// so it jumps back to where the parameter is; nothing when the value cannot be read now (the
    /// `/error` already said why).
    func snapBack(_ query: ParameterQuery, to sender: OSCSender) {
        guard let value = try? query.control.currentValue() else { return }
        replies.send(FaderTaper.message(value, for: query.control.descriptor), to: sender)
    }

    /// `/state ,s address` → `/state ,s address ,s state <value> [,s error]`: the update state of
    /// the parameter's latest change; an unknown address or one that cannot be read now → `/error`.
    func answerState(of address: String, to sender: OSCSender) {
        guard let control = runtime.parameter(at: address) else {
            replies.reject("/state", ParameterError.unknownAddress(address).description, to: sender)
            return
        }
        do {
            let state = try control.currentUpdateState()
            var arguments: [OSCArgument] = [.string(address), .string(state.name.rawValue), state.value.oscArgument]
            if let reason = state.reason { arguments.append(.string(reason)) }
            replies.send(OSCMessage("/state", arguments), to: sender)
        } catch {
            replies.reject("/state", "\(error)", to: sender)
        }
    }

    /// Requests the sets of one packet together (with continuous delivery the kernel values
    /// land in one audio cycle), then reports each: every state to the sender, the terminal
    /// one to subscribers.
    /// With `time`, the sets take effect at that moment (a bundle with a future timetag): each
    /// reports `applying` at once and ends when the audio cycle containing it acknowledged it.
    func request(_ sets: [(ParameterSet, PendingRequests.Ticket)], from sender: OSCSender,
                 feedback: SubscriberFeedback, at time: EngineTime? = nil) {
        let changes = sets.map { ($0.0.control, $0.0.value) }
        // Every set was checked when it was routed (`route`), just before.
        let results = time.map { runtime.requestBatch(changes, origin: RequestOrigin(sender), at: $0, checked: true) }
            ?? runtime.requestBatch(changes, origin: RequestOrigin(sender), checked: true)
        for ((routed, ticket), result) in zip(sets, results) {
            switch result {
            case .success(let request):
                report(request, of: routed, to: sender, feedback: feedback, ticket: ticket)
            case .failure(let error):
                replies.reject(routed.address, "\(error)", to: sender)
                pending.end(ticket)
            }
        }
    }

    /// `/state ,s address ,s state <value> [,s error] [,i request_id]` for every state of the
    /// request, to its sender; the terminal one also to subscribers (not to the sender). A fader
    /// (a normalized set) also gets its position when it has to move: to the step its value
    /// snapped to once applied, back to the current value when the change failed.
    ///
    /// `applied` comes once the change is in the state journal (the parameter waits for it).
    /// When the state cannot be written, the change still applied, but is not persisted: the
    /// sender gets `/error ,s address ,s "not persisted: <reason>"` right after `applied`, and
    /// subscribers' `/state … applied <value>` carries `"not persisted: <reason>"` as its error.
    /// The request stays under way (`ticket`) until its terminal state was sent.
    private func report(_ request: ParameterRequest<ParameterValue>, of routed: ParameterSet,
                        to sender: OSCSender, feedback: SubscriberFeedback, ticket: PendingRequests.Ticket) {
        let requestID = routed.requestID
        Task { [replies, persistence, pending] in
            defer { pending.end(ticket) }
            for await state in request.states {
                var arguments: [OSCArgument] = [.string(request.address), .string(state.name.rawValue),
                                                state.value.oscArgument]
                if let reason = state.reason { arguments.append(.string(reason)) }
                if let requestID { arguments.append(.int32(requestID)) }
                replies.send(OSCMessage("/state", arguments), to: sender)
                let notPersisted = state.name == .applied ? persistence.problem.map { "not persisted: \($0)" } : nil
                if let notPersisted { replies.reject(request.address, notPersisted, to: sender) }
                if let position = routed.position, let move = Self.faderMove(routed.control, from: position, after: state) {
                    replies.send(move, to: sender)
                }
                if state.isTerminal {
                    feedback.enqueue {
                        $0.enqueueTerminalState(address: request.address, state: state.name.rawValue,
                                                value: state.value, error: state.reason ?? notPersisted, origin: sender.peer)
                    }
                }
            }
        }
    }

    /// Where a fader left at `position` must go after its change reached `state`: to the applied
    /// value's position when that is another (a snapped step), to the current value's when the
    /// change failed; nil otherwise (superseded: a newer value is on its way).
    private static func faderMove(_ control: any ControlParameter, from position: Float,
                                  after state: ParameterUpdateState<ParameterValue>) -> OSCMessage? {
        switch state.name {
        case .applied:
            return FaderTaper.snapped(from: position, to: state.value, for: control.descriptor)
        case .failed:
            guard let current = try? control.currentValue() else { return nil }
            return FaderTaper.message(current, for: control.descriptor)
        default:
            return nil
        }
    }

    /// Every parameter's current value, in address-space order (those that cannot be read now,
    /// e.g. session parameters without a session, are left out): a new subscriber's snapshot.
    func currentValues() -> [(ParameterDescriptor, ParameterValue)] {
        runtime.parameters.compactMap { control in
            (try? control.currentValue()).map { (control.descriptor, $0) }
        }
    }

    /// Calls `body` with every applied change, its parameter's descriptor and the sender that
    /// requested it (nil: no OSC client, e.g. a patch load or MIDI), on the thread that made the
    /// change, before its request is reported applied (so `/sync` orders what `body` queues).
    /// Observe before answering requests, so no change is missed.
    func observeAppliedChanges(
        _ body: @escaping @Sendable (ParameterDescriptor, ParameterChange<ParameterValue>, OSCSender?) -> Void
    ) -> ChangeObservation {
        runtime.observeChanges { [runtime] change in
            guard let control = runtime.parameter(at: change.address) else { return }
            body(control.descriptor, change, change.origin?.sender(as: OSCSender.self))
        }
    }
}

/// A parameter query from one message.
struct ParameterQuery: Sendable {
    fileprivate let control: any ControlParameter
    /// The address the message used (the parameter's own, or its `/normalized` form).
    let address: String
    /// Answer with the fader position.
    let normalized: Bool
}

/// A validated parameter set from one message, waiting to be requested with its packet.
struct ParameterSet: Sendable {
    fileprivate let control: any ControlParameter
    /// The address the message used (the parameter's own, or its `/normalized` form).
    let address: String
    let value: ParameterValue
    let requestID: Int32?
    /// The fader position a normalized set asked for; nil for a native set.
    let position: Float?
}

/// Whether the changes a surface reports applied are persisted: the state keeper's problem,
/// once one is attached (without persistence nothing is reported). Any thread.
final class PersistenceStatus: Sendable {
    private let keeper = Mutex<StateKeeper?>(nil)

    func attach(_ stateKeeper: StateKeeper) {
        keeper.withLock { $0 = stateKeeper }
    }

    /// Why the state is not persisted now; nil when it is, or without persistence.
    var problem: String? { keeper.withLock { $0 }?.persistenceProblem }
}
