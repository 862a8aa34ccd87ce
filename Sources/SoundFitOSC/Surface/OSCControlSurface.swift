import Foundation
import Logging
import SoundFitEngine
import Synchronization

/// What `/status` reports besides the engine's own state; provided by the host program.
public struct SurfaceStatus: Sendable {
    public var fields: [(String, OSCArgument)]
    public init(fields: [(String, OSCArgument)]) { self.fields = fields }
}

/// Maps OSC addresses to SoundFit's parameters and commands, and answers every request:
/// a reply, `/state` reports for changes, or an `/error` for anything rejected.
///
/// Thread rules: `handle` runs on the socket's receive thread and publishes changes there
/// synchronously, so requests take effect in the order they arrived; waiting for the audio
/// thread's acknowledgement happens in tasks.
public final class OSCControlSurface: Sendable {
    public static let version = "0.1.0"
    /// Datagrams larger than this are dropped with a log line.
    public static let maximumPacketBytes = 16384

    private let engine: AudioEngine
    private let socket: OSCSocket
    private let logger: Logger
    private let status: @Sendable () -> SurfaceStatus
    private let deliveryTimeout = Mutex<Duration>(.seconds(10))

    public init(engine: AudioEngine, socket: OSCSocket, logger: Logger,
                status: @escaping @Sendable () -> SurfaceStatus) {
        self.engine = engine
        self.socket = socket
        self.logger = logger
        self.status = status
    }

    /// Starts answering on the socket.
    public func start() {
        socket.startReceiving(
            maximumPacketBytes: Self.maximumPacketBytes,
            onPacket: { [self] bytes, peer in handle(bytes, from: peer) },
            onOversized: { [logger] size, peer in
                logger.warning("dropped a \(size)-byte OSC packet from \(peer) (limit \(Self.maximumPacketBytes))")
            })
    }

    /// Decodes one datagram and answers it. Receive thread.
    func handle(_ bytes: [UInt8], from peer: OSCPeer) {
        let packet: OSCPacket
        do {
            packet = try OSCCodec.decode(bytes)
        } catch {
            logger.info("undecodable OSC packet from \(peer): \(error)")
            send(OSCMessage("/error", [.string(""), .string(error.description)]), to: peer)
            return
        }
        switch packet {
        case .message(let message):
            handle([message], from: peer)
        case .bundle:
            handle(packet.messages, from: peer)
        }
    }

    /// Answers the messages of one packet. The parameter changes among them are published as
    /// one batch, so a bundle takes effect in a single audio cycle.
    private func handle(_ messages: [OSCMessage], from peer: OSCPeer) {
        var changes: [ParameterChangeRequest] = []
        for message in messages {
            if let change = route(message, from: peer) {
                changes.append(change)
            }
        }
        guard !changes.isEmpty else { return }
        submit(changes, from: peer)
    }

    /// Answers a command or query at once; returns a validated parameter change to publish.
    private func route(_ message: OSCMessage, from peer: OSCPeer) -> ParameterChangeRequest? {
        switch message.address {
        case "/ping":
            send(OSCMessage("/pong", message.arguments), to: peer)
        case "/list":
            sendList(to: peer)
        case "/status":
            sendStatus(to: peer)
        default:
            guard let parameter = EngineParameter(address: message.address) else {
                reject(message.address, ParameterError.unknownAddress(message.address).description, to: peer)
                return nil
            }
            return parameterRequest(parameter, message, from: peer)
        }
        return nil
    }

    private func parameterRequest(_ parameter: EngineParameter, _ message: OSCMessage,
                                  from peer: OSCPeer) -> ParameterChangeRequest? {
        let descriptor = parameter.descriptor
        var arguments = message.arguments
        if arguments.isEmpty {
            send(OSCMessage(descriptor.address, [engine.value(of: parameter).oscArgument]), to: peer)
            return nil
        }
        // An optional trailing int is a request id, echoed in the /state reports.
        var requestID: Int32?
        if arguments.count == 2, case .int32(let id) = arguments[1] {
            requestID = id
            arguments.removeLast()
        }
        guard arguments.count == 1 else {
            reject(descriptor.address, "\(descriptor.address) takes one value (and an optional int request id), got \(message.arguments.count) arguments", to: peer)
            return nil
        }
        do throws(ParameterError) {
            guard descriptor.access == .readWrite else { throw .readOnly(address: descriptor.address) }
            let value = try descriptor.kind.coerce(arguments[0], address: descriptor.address)
            try descriptor.validate(value)
            return ParameterChangeRequest(parameter: parameter, value: value, requestID: requestID)
        } catch {
            reject(descriptor.address, error.description, to: peer)
            return nil
        }
    }

    private func submit(_ changes: [ParameterChangeRequest], from peer: OSCPeer) {
        let submission: EngineSubmission
        do {
            submission = try engine.submit(changes.map { ($0.parameter, $0.value) })
        } catch {
            // Every value was validated above; this is a defect, but still answered.
            for change in changes { reject(change.parameter.descriptor.address, error.description, to: peer) }
            return
        }
        for change in changes { sendState(change, "applying", to: peer) }
        let timeout = deliveryTimeout.withLock { $0 }
        Task { [self] in
            do {
                try await engine.waitUntilApplied(submission, timeout: timeout)
                for change in changes { sendState(change, "applied", to: peer) }
            } catch {
                logger.warning("change not applied: \(error)")
                for change in changes { sendState(change, "failed", error: "\(error)", to: peer) }
            }
        }
    }

    private func sendState(_ change: ParameterChangeRequest, _ state: String, error: String? = nil, to peer: OSCPeer) {
        var arguments: [OSCArgument] = [.string(change.parameter.descriptor.address), .string(state), change.value.oscArgument]
        if let error { arguments.append(.string(error)) }
        if let id = change.requestID { arguments.append(.int32(id)) }
        send(OSCMessage("/state", arguments), to: peer)
    }

    private func sendList(to peer: OSCPeer) {
        let descriptors = EngineParameter.allCases.map(\.descriptor)
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

    private func sendStatus(to peer: OSCPeer) {
        var arguments: [OSCArgument] = []
        for (key, value) in status().fields {
            arguments.append(.string(key))
            arguments.append(value)
        }
        arguments += [.string("cycles"), .int64(Int64(engine.cycleCount)), .string("version"), .string(Self.version)]
        send(OSCMessage("/status", arguments), to: peer)
    }

    private func reject(_ address: String, _ reason: String, to peer: OSCPeer) {
        logger.debug("rejected \(address) from \(peer): \(reason)")
        send(OSCMessage("/error", [.string(address), .string(reason)]), to: peer)
    }

    private func send(_ message: OSCMessage, to peer: OSCPeer) {
        if !socket.send(OSCCodec.encode(message), to: peer) {
            logger.debug("could not send \(message.address) to \(peer)")
        }
    }
}

/// A validated parameter change from one OSC message.
struct ParameterChangeRequest: Sendable {
    var parameter: EngineParameter
    var value: ParameterValue
    var requestID: Int32?
}
