import OSCCore
import SoundFitProcessing

/// What `/status` reports besides the engine's own state; provided by the host program.
public struct SurfaceStatus: Sendable {
    public var fields: [(String, OSCArgument)]
    public init(fields: [(String, OSCArgument)]) { self.fields = fields }
}

/// `/status` and `/session`: the surface's reports of the program's state.
extension OSCControlSurface {
    /// `/status ,s key <value> …`: the host program's fields, then session, subscribers, the
    /// subscriptions awaiting confirmation, the datagrams dropped over a source's budget, cycles,
    /// the output safety limit (its level, the ceiling fixed at start, the limit in force in dBFS —
    /// overall and per ear —, each ear's derived maximum while a preset is in force, and the
    /// largest reduction in dB since the previous `/status`) and version.
    func statusMessage() -> OSCMessage {
        var arguments: [OSCArgument] = []
        for (key, value) in status().fields {
            arguments.append(.string(key))
            arguments.append(value)
        }
        let earLimits = runtime.earOutputLimitsDBFS
        if let maxima = runtime.earMaxima {
            arguments += [.string("derived_max_output_left_spl"), .float(Float(maxima.left)),
                          .string("derived_max_output_right_spl"), .float(Float(maxima.right))]
        }
        arguments += [.string("session"), .string(runtime.controller.session == nil ? "inactive" : "active"),
                      .string("subscribers"), .int32(Int32(feedback.registry.subscribers.count)),
                      .string("pending_confirmations"), .int32(Int32(feedback.pendingConfirmationCount)),
                      .string("answers_dropped"), .int64(Int64(budgeted?.droppedCount ?? 0)),
                      .string("cycles"), .int64(Int64(runtime.engine.cycleCount)),
                      .string("max_output_spl"), .float(Float(runtime.maximumOutputSPL)),
                      .string("output_ceiling_spl"), .float(Float(runtime.ceiling.maximumOutputSPL)),
                      .string("output_limit_dbfs"), .float(Float(runtime.outputLimitDBFS)),
                      .string("output_limit_left_dbfs"), .float(Float(earLimits.left)),
                      .string("output_limit_right_dbfs"), .float(Float(earLimits.right)),
                      .string("output_limit_db"), .float(Float(runtime.engine.takeOutputLimitReduction())),
                      .string("version"), .string(Self.version)]
        arguments += personalizationStatusArguments()
        return OSCMessage("/status", arguments)
    }

    /// `/session ,s active|inactive [,s mode ,i tech_level]`.
    func sessionMessage() -> OSCMessage {
        guard let session = runtime.controller.session else { return OSCMessage("/session", [.string("inactive")]) }
        return OSCMessage("/session", [.string("active")] + Self.configurationArguments(session.configuration))
    }

    static func configurationArguments(_ configuration: ProcessingConfiguration) -> [OSCArgument] {
        switch configuration.personalization {
        case .fineTuning(let techLevel): [.string("fine_tuning"), .int32(Int32(techLevel.value))]
        case .singlePreset(let techLevel): [.string("single_preset"), .int32(Int32(techLevel.value))]
        }
    }
}
