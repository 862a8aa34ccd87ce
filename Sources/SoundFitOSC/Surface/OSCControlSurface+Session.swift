import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime

/// Session, interruption and delivery-configuration commands (the OSC contract's command table).
extension OSCControlSurface {
    /// `/session ,s active|inactive [,s mode ,i tech_level]`.
    func sessionReply() -> OSCMessage {
        guard let session = runtime.controller.session else { return OSCMessage("/session", [.string("inactive")]) }
        return OSCMessage("/session", [.string("active")] + Self.configurationArguments(session.configuration))
    }

    static func configurationArguments(_ configuration: ProcessingConfiguration) -> [OSCArgument] {
        switch configuration.personalization {
        case .fineTuning(let fitting): [.string("fine_tuning"), .int32(Int32(fitting.techLevel))]
        case .singlePreset(let fitting): [.string("single_preset"), .int32(Int32(fitting.techLevel))]
        }
    }

    func sessionQuery(_ message: OSCMessage, _ peer: OSCPeer) {
        guard message.arguments.isEmpty else {
            reject(message.address, "/session takes no arguments (use /session/activate or /session/deactivate)", to: peer)
            return
        }
        send(sessionReply(), to: peer)
    }

    /// `/session/activate ,s fine_tuning|single_preset ,i tech_level`.
    func sessionActivate(_ message: OSCMessage, _ peer: OSCPeer) {
        let arguments = message.arguments
        guard arguments.count == 2, case .string(let mode) = arguments[0], let level = Self.integer(arguments[1]) else {
            reject(message.address, "expects ,s fine_tuning|single_preset ,i tech_level", to: peer)
            return
        }
        let configuration: ProcessingConfiguration
        do {
            let fitting = try Fitting(techLevel: level)
            switch mode {
            case "fine_tuning": configuration = .fineTuning(fitting: fitting)
            case "single_preset": configuration = .singlePreset(fitting: fitting)
            default: throw ControlError("unknown personalization mode '\(mode)' (fine_tuning or single_preset)")
            }
        } catch {
            reject(message.address, "\(error)", to: peer)
            return
        }
        Task { [self] in
            do {
                _ = try await runtime.activateSession(configuration)
                send(sessionReply(), to: peer)
            } catch {
                reject(message.address, "\(error)", to: peer)
            }
        }
    }

    func sessionDeactivate(_ message: OSCMessage, _ peer: OSCPeer) {
        guard message.arguments.isEmpty else {
            reject(message.address, "/session/deactivate takes no arguments", to: peer)
            return
        }
        Task { [self] in
            await runtime.deactivateSession()
            send(sessionReply(), to: peer)
        }
    }

    func sessionInterrupt(_ message: OSCMessage, _ peer: OSCPeer) {
        interruption(message, peer) { session, reason in try await session.interrupt(reason: reason) }
    }

    func sessionResolve(_ message: OSCMessage, _ peer: OSCPeer) {
        interruption(message, peer) { session, reason in try await session.resolve(interruption: reason) }
    }

    /// `/session/interrupt ,s reason` and `/session/resolve ,s reason` → `/session/interrupted ,i 0|1`.
    private func interruption(_ message: OSCMessage, _ peer: OSCPeer,
                              _ operation: @escaping @Sendable (ProcessingSession, String) async throws -> Bool) {
        guard message.arguments.count == 1, case .string(let reason) = message.arguments[0], !reason.isEmpty else {
            reject(message.address, "expects one non-empty string: the interruption reason", to: peer)
            return
        }
        guard let session = runtime.controller.session else {
            reject(message.address, "no processing session is active", to: peer)
            return
        }
        Task { [self] in
            do {
                let interrupted = try await operation(session, reason)
                let reply = OSCMessage("/session/interrupted", [.int32(interrupted ? 1 : 0)])
                send(reply, to: peer)
                enqueueForSubscribers { $0.enqueueNotification(reply, origin: peer) }
            } catch {
                reject(message.address, "\(error)", to: peer)
            }
        }
    }

    /// `/config/delivery ,s continuous` or `,s discrete [,f settle_seconds]`; no argument queries.
    func configDelivery(_ message: OSCMessage, _ peer: OSCPeer) {
        var config = runtime.config
        if !message.arguments.isEmpty {
            guard case .string(let style) = message.arguments[0], message.arguments.count <= 2 else {
                reject(message.address, "expects ,s continuous or ,s discrete [,f settle_seconds]", to: peer)
                return
            }
            switch (style, message.arguments.count) {
            case ("continuous", 1):
                config.deliveryStyle = .continuous
            case ("continuous", _):
                reject(message.address, "continuous delivery takes no settle time", to: peer)
                return
            case ("discrete", 1):
                config.deliveryStyle = .discrete()
            case ("discrete", 2):
                guard let seconds = Self.number(message.arguments[1]) else {
                    reject(message.address, "settle time must be a number of seconds", to: peer)
                    return
                }
                guard seconds.isFinite, seconds > 0, seconds <= 10 else {
                    reject(message.address, "settle time must be > 0 and ≤ 10 s, got \(seconds)", to: peer)
                    return
                }
                config.deliveryStyle = .discrete(settleTime: .milliseconds(Int64((seconds * 1000).rounded())))
            default:
                reject(message.address, "unknown delivery style '\(style)' (continuous or discrete [settle_seconds])", to: peer)
                return
            }
            do {
                try config.validate()
            } catch {
                reject(message.address, "\(error)", to: peer)
                return
            }
            runtime.config = config
            stateKeeper?.persist()
        }
        send(OSCMessage("/config/delivery", Self.deliveryArguments(runtime.config)), to: peer)
    }

    static func deliveryArguments(_ config: ProcessingConfig) -> [OSCArgument] {
        switch config.deliveryStyle {
        case .continuous: [.string("continuous"), .float(0)]
        case .discrete(let settle): [.string("discrete"), .float(Float(settle.seconds))]
        }
    }

    /// `/config/timeout ,f seconds`; no argument queries.
    func configTimeout(_ message: OSCMessage, _ peer: OSCPeer) {
        if !message.arguments.isEmpty {
            guard message.arguments.count == 1, let seconds = Self.number(message.arguments[0]) else {
                reject(message.address, "expects ,f seconds", to: peer)
                return
            }
            guard seconds.isFinite, seconds >= 0.01, seconds <= 600 else {
                reject(message.address, "timeout must be 0.01…600 s, got \(seconds)", to: peer)
                return
            }
            var config = runtime.config
            config.deliveryTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
            runtime.config = config
            stateKeeper?.persist()
        }
        send(OSCMessage("/config/timeout", [.float(Float(runtime.config.deliveryTimeout.seconds))]), to: peer)
    }

    static func number(_ argument: OSCArgument) -> Double? {
        switch argument {
        case .float(let v): Double(v)
        case .double(let v): v
        case .int32(let v): Double(v)
        case .int64(let v): Double(v)
        default: nil
        }
    }

    static func integer(_ argument: OSCArgument) -> Int? {
        switch argument {
        case .int32(let v): Int(v)
        case .int64(let v): Int(clamping: v)
        case .float(let v) where v.rounded() == v && abs(v) < 1e6: Int(v)
        default: nil
        }
    }
}
