import Foundation
import Logging
import SoundFitModel
import SoundFitEngine
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState
import Synchronization

/// What `/status` reports besides the engine's own state; provided by the host program.
public struct SurfaceStatus: Sendable {
    public var fields: [(String, OSCArgument)]
    public init(fields: [(String, OSCArgument)]) { self.fields = fields }
}

/// Maps OSC addresses to SoundFit's parameters and commands, and answers every request:
/// a reply, `/state` reports for changes, or an `/error` for anything rejected.
///
/// Thread rules: `handle` runs on the socket's receive thread and requests changes there
/// synchronously, so requests are accepted in the order they arrived; their states and
/// asynchronous commands are answered from tasks.
public final class OSCControlSurface: Sendable {
    public static let version = "0.1.0"
    /// Datagrams larger than this are dropped with a log line.
    public static let maximumPacketBytes = 16384

    let runtime: SoundFitRuntime
    let socket: OSCSocket
    let logger: Logger
    let subscribers = SharedSubscriberRegistry()
    private let keeper = Mutex<StateKeeper?>(nil)
    /// Patches and durable state, once attached.
    var stateKeeper: StateKeeper? { keeper.withLock { $0 } }
    private let allowList: OSCAllowList
    private let status: @Sendable () -> SurfaceStatus
    /// Refused senders and oversized packets are logged at most a few times per interval.
    private let refusals: RateLimitedLog<String>
    /// Whether a flush of subscriber feedback is scheduled.
    private let flushScheduled = Atomic<Bool>(false)

    public init(runtime: SoundFitRuntime, socket: OSCSocket, logger: Logger, allowList: OSCAllowList = .everyone,
                status: @escaping @Sendable () -> SurfaceStatus) {
        self.runtime = runtime
        self.socket = socket
        self.logger = logger
        self.allowList = allowList
        self.status = status
        refusals = RateLimitedLog { [logger] line in logger.warning("\(line)") }
    }

    /// Attaches patches and durable state (before `start`).
    public func attach(_ stateKeeper: StateKeeper) {
        keeper.withLock { $0 = stateKeeper }
    }

    /// Starts answering on the socket and sending feedback to subscribers.
    public func start() {
        let changes = runtime.changeUpdates()
        Task { [self] in
            for await change in changes {
                guard let control = runtime.parameter(at: change.address) else { continue }
                enqueueForSubscribers { registry in
                    registry.enqueueFeedback(control.descriptor, value: change.value, origin: change.origin.flatMap(Self.peer))
                }
            }
        }
        let sessions = runtime.controller.sessionUpdates()
        Task { [self] in
            for await _ in sessions {
                enqueueForSubscribers { $0.enqueueNotification(sessionReply(), origin: nil) }
            }
        }
        socket.startReceiving(
            maximumPacketBytes: Self.maximumPacketBytes,
            onPacket: { [self] bytes, peer in handle(bytes, from: peer) },
            onOversized: { [refusals] size, peer in
                refusals.log("oversized", "dropped a \(size)-byte OSC packet from \(peer) (limit \(Self.maximumPacketBytes))")
            })
    }

    /// The origin of a request from `peer`, and back.
    static func origin(_ peer: OSCPeer) -> RequestOrigin { RequestOrigin(peer) }
    static func peer(_ origin: RequestOrigin) -> OSCPeer? { origin.sender(as: OSCPeer.self) }

    /// Queues feedback for subscribers and, when the queue was empty, sends it shortly: bursts
    /// within the flush delay coalesce (latest value per address wins).
    func enqueueForSubscribers(_ enqueue: (SharedSubscriberRegistry) -> Bool) {
        guard enqueue(subscribers) else { return }
        guard !flushScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [self] in
            try? await Task.sleep(for: .milliseconds(5))
            flushScheduled.store(false, ordering: .releasing)
            let dropped = subscribers.flush { peer, message in socket.send(OSCCodec.encode(message), to: peer) }
            for subscriber in dropped {
                logger.warning("dropped subscriber \(subscriber.target): sends kept failing")
            }
        }
    }

    /// Decodes one datagram and answers it. Receive thread.
    func handle(_ bytes: [UInt8], from peer: OSCPeer) {
        // A packet from this very socket is one of SoundFit's own replies (or a forgery of one):
        // answering it would start an exchange with itself that never ends.
        guard !socket.isOwnSocket(peer) else {
            refusals.log("own socket", "dropped an OSC packet whose source is SoundFit's own port \(peer)")
            return
        }
        guard allowList.allows(peer) else {
            refusals.log("refused \(peer.host)", "ignored OSC from \(peer): not in --osc-allow \(allowList)")
            return
        }
        let packet: OSCPacket
        do {
            packet = try OSCCodec.decode(bytes)
        } catch {
            logger.info("undecodable OSC packet from \(peer): \(error)")
            send(OSCMessage("/error", [.string(""), .string(error.description)]), to: peer)
            return
        }
        var changes: [RequestedValue] = []
        for message in packet.messages where !ReplyForms.isReply(message) {
            if let change = route(message, from: peer) {
                changes.append(change)
            }
        }
        guard !changes.isEmpty else { return }
        // The changes of one packet are requested together: a bundle lands in one audio cycle.
        let results = runtime.requestBatch(changes.map { ($0.control, $0.value) }, origin: Self.origin(peer))
        for (change, result) in zip(changes, results) {
            switch result {
            case .success(let request): report(request, requestID: change.requestID, to: peer)
            case .failure(let error): reject(change.address, "\(error)", to: peer)
            }
        }
    }

    /// Answers a command or query at once; returns a validated parameter change to request.
    private func route(_ message: OSCMessage, from peer: OSCPeer) -> RequestedValue? {
        if runCommand(message, from: peer) {
            return nil
        }
        if let control = runtime.parameter(at: message.address) {
            return parameterChange(control, message, from: peer)
        }
        if let address = FaderTaper.parameterAddress(forNormalized: message.address),
           let control = runtime.parameter(at: address) {
            return parameterChange(control, message, from: peer, normalized: true)
        }
        reject(message.address, ParameterError.unknownAddress(message.address).description, to: peer)
        return nil
    }

    /// A set (one argument, and an optional request id) or a query (none) of a parameter, in
    /// native units or as a fader position (`<address>/normalized`).
    private func parameterChange(_ control: any ControlParameter, _ message: OSCMessage,
                                 from peer: OSCPeer, normalized: Bool = false) -> RequestedValue? {
        let descriptor = control.descriptor
        var arguments = message.arguments
        if arguments.isEmpty {
            do {
                let value = try control.currentValue()
                send(normalized ? FaderTaper.message(value, for: descriptor)
                                : OSCMessage(descriptor.address, [value.oscArgument]), to: peer)
            } catch {
                reject(message.address, "\(error)", to: peer)
            }
            return nil
        }
        // An optional trailing int is a request id, echoed in the /state reports.
        var requestID: Int32?
        if arguments.count == 2, case .int32(let id) = arguments[1] {
            requestID = id
            arguments.removeLast()
        }
        guard arguments.count == 1 else {
            reject(message.address, "\(message.address) takes one value (and an optional int request id), got \(message.arguments.count) arguments", to: peer)
            return nil
        }
        do throws(ParameterError) {
            guard descriptor.access == .readWrite else { throw .readOnly(address: descriptor.address) }
            let value = normalized
                ? try FaderTaper.value(from: arguments[0], for: descriptor)
                : try descriptor.kind.coerce(arguments[0], address: descriptor.address)
            // Validated once, against the entry, when the runtime accepts the request.
            return RequestedValue(control: control, address: message.address, value: value, requestID: requestID)
        } catch {
            reject(message.address, error.description, to: peer)
            return nil
        }
    }

    /// Sends the requester every state of its request, and subscribers its terminal state.
    private func report(_ request: ParameterRequest<ParameterValue>, requestID: Int32?, to peer: OSCPeer) {
        Task { [self] in
            for await state in request.states {
                var arguments: [OSCArgument] = [.string(request.address), .string(state.name.rawValue),
                                                state.value.oscArgument]
                if let reason = state.reason { arguments.append(.string(reason)) }
                if let requestID { arguments.append(.int32(requestID)) }
                send(OSCMessage("/state", arguments), to: peer)
                if state.isTerminal {
                    enqueueForSubscribers {
                        $0.enqueueTerminalState(address: request.address, state: state.name.rawValue,
                                                value: state.value, error: state.reason, origin: peer)
                    }
                }
            }
        }
    }

    func reject(_ address: String, _ reason: String, to peer: OSCPeer) {
        logger.debug("rejected \(address) from \(peer): \(reason)")
        send(OSCMessage("/error", [.string(address), .string(reason)]), to: peer)
    }

    func send(_ message: OSCMessage, to peer: OSCPeer) {
        if !socket.send(OSCCodec.encode(message), to: peer) {
            logger.debug("could not send \(message.address) to \(peer)")
        }
    }

    // MARK: Commands

    /// The command addresses this surface answers (besides the parameters).
    public static let commandAddresses = [
        "/ping", "/list", "/status", "/session", "/session/activate", "/session/deactivate",
        "/session/interrupt", "/session/resolve", "/config/delivery", "/config/timeout",
        "/subscribe", "/unsubscribe", "/profile/audiogram",
        "/patch/list", "/patch/load", "/patch/save", "/patch/delete", "/patch/current",
    ]

    /// Runs the command at the message's address; false when the address is not a command.
    private func runCommand(_ message: OSCMessage, from peer: OSCPeer) -> Bool {
        switch message.address {
        case "/ping": ping(message, peer)
        case "/list": list(message, peer)
        case "/status": sendStatus(message, peer)
        case "/session": sessionQuery(message, peer)
        case "/session/activate": sessionActivate(message, peer)
        case "/session/deactivate": sessionDeactivate(message, peer)
        case "/session/interrupt": sessionInterrupt(message, peer)
        case "/session/resolve": sessionResolve(message, peer)
        case "/config/delivery": configDelivery(message, peer)
        case "/config/timeout": configTimeout(message, peer)
        case "/subscribe": subscribe(message, peer)
        case "/unsubscribe": unsubscribe(message, peer)
        case "/profile/audiogram": profileAudiogram(message, peer)
        case "/patch/list": patchList(message, peer)
        case "/patch/load": patchLoad(message, peer)
        case "/patch/save": patchSave(message, peer)
        case "/patch/delete": patchDelete(message, peer)
        case "/patch/current": patchCurrent(message, peer)
        default: return false
        }
        return true
    }

    /// `/subscribe [,s url] [,s native|normalized|both]` → `/subscribed ,s url ,s feedback`, then
    /// every parameter's current value (the snapshot that brings a surface in sync).
    private func subscribe(_ message: OSCMessage, _ peer: OSCPeer) {
        do throws(SubscriptionError) {
            let request = try SubscriptionRequest(subscribe: message.arguments)
            if let url = request.url, socket.isOwnSocket(url) { throw .ownSocket(url: url.oscURL) }
            let subscriber = try subscribers.subscribe(from: peer, request)
            send(subscriber.subscribedMessage, to: subscriber.target)
            // A subscription for another URL is confirmed to its sender too.
            if subscriber.target != peer { send(subscriber.subscribedMessage, to: peer) }
            let values = runtime.parameters.compactMap { control in
                (try? control.currentValue()).map { (control.descriptor, $0) }
            }
            for snapshot in SubscriberRegistry.snapshot(values, feedback: subscriber.feedback) {
                send(snapshot, to: subscriber.target)
            }
            send(sessionReply(), to: subscriber.target)
        } catch {
            reject(message.address, error.description, to: peer)
        }
    }

    /// `/unsubscribe [,s url]` → `/unsubscribed ,s url` for each subscription removed.
    private func unsubscribe(_ message: OSCMessage, _ peer: OSCPeer) {
        do throws(SubscriptionError) {
            let request = try SubscriptionRequest(unsubscribe: message.arguments)
            for removed in try subscribers.unsubscribe(from: peer, url: request.url) {
                send(removed.unsubscribedMessage, to: peer)
            }
        } catch {
            reject(message.address, error.description, to: peer)
        }
    }

    private func ping(_ message: OSCMessage, _ peer: OSCPeer) {
        send(OSCMessage("/pong", message.arguments), to: peer)
    }

    private func list(_ message: OSCMessage, _ peer: OSCPeer) {
        let descriptors = runtime.descriptors
        for descriptor in descriptors {
            send(OSCMessage("/list/param", Self.listArguments(descriptor)), to: peer)
        }
        send(OSCMessage("/list/end", [.int32(Int32(descriptors.count))]), to: peer)
    }

    /// `/list/param ,s address ,s type ,s access ,<min> ,<max> | ,s choices… ,<default> ,s unit`.
    static func listArguments(_ descriptor: ParameterDescriptor) -> [OSCArgument] {
        var arguments: [OSCArgument] = [.string(descriptor.address), .string(descriptor.kind.typeName),
                                        .string(descriptor.access.rawValue)]
        switch descriptor.kind {
        case .bool: arguments += [.int32(0), .int32(1)]
        case .float(let range): arguments += [.float(range.lowerBound), .float(range.upperBound)]
        case .int(let range): arguments += [.int32(Int32(range.lowerBound)), .int32(Int32(range.upperBound))]
        case .choice(let names): arguments.append(.string(names.joined(separator: " ")))
        }
        arguments.append(descriptor.defaultValue.oscArgument)
        arguments.append(.string(descriptor.unit))
        return arguments
    }

    private func sendStatus(_ message: OSCMessage, _ peer: OSCPeer) {
        var arguments: [OSCArgument] = []
        for (key, value) in status().fields {
            arguments.append(.string(key))
            arguments.append(value)
        }
        arguments += [.string("session"), .string(runtime.controller.session == nil ? "inactive" : "active"),
                      .string("subscribers"), .int32(Int32(subscribers.subscribers.count)),
                      .string("cycles"), .int64(Int64(runtime.engine.cycleCount)),
                      .string("version"), .string(Self.version)]
        send(OSCMessage("/status", arguments), to: peer)
    }
}

/// A value one OSC message asks a parameter to take.
struct RequestedValue: Sendable {
    var control: any ControlParameter
    /// The address the message used (the parameter's own, or its `/normalized` form).
    var address: String
    var value: ParameterValue
    var requestID: Int32?
}
