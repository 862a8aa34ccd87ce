import SoundFitHearing
import SoundFitProcessing
import SoundFitRuntime

/// `/config/delivery`, `/config/timeout`, `/config/max_output`, `/config/calibration`.
extension OSCCommandTable {
    static let configuration = [delivery, timeout, maximumOutput, calibration]

    /// `,s continuous ,f 0` is a reply (continuous delivery takes no settle time as a request);
    /// `,s discrete ,f 0.2` is a request as well as a reply, so it is answered.
    static let delivery = OSCCommand(
        OSCCommandDescription(
            "/config/delivery", section: .configuration,
            summary: "How changes are delivered: `continuous` applies each value as it arrives (values of "
                + "filter, ring modulator and output parameters stream to the audio thread without waiting for "
                + "one another, up to 8 in flight; one the audio thread skipped for a newer one ends "
                + "`superseded`); `discrete` applies a value only once it has stayed unchanged for the settle "
                + "time (older values end `superseded`). Without arguments, queries.",
            arguments: [
                Arg("s", "style", "`continuous` or `discrete`.", optional: true),
                Arg("f", "settle_seconds", "discrete only: the settle time (default 0.2).", optional: true),
            ],
            reply: "`/config/delivery ,s style ,f settle_seconds`.",
            errors: [
                "unknown style",
                "settle time not within 0.001…10 s (checked as sent: a time that would round to 0 ms is refused), or given with `continuous`",
            ],
            examples: [
                "oscsend localhost 7700 /config/delivery sf discrete 0.2",
                "oscsend localhost 7700 /config/delivery s continuous",
            ]),
        requests: [
            .bare("/config/delivery"),
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["continuous"])])),
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["discrete"])])),
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["discrete"]), .any])),
        ],
        replies: [
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["continuous"]), .floatValue(0)])),
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["discrete"]), .float])),
        ],
        handle: answerDelivery)

    /// `/config/delivery ,s continuous` or `,s discrete [,f settle_seconds]`; no argument queries.
    private static func answerDelivery(_ request: OSCCommandRequest) {
        let runtime = request.surface.runtime
        let arguments = request.arguments
        var config = runtime.config
        if !arguments.isEmpty {
            guard case .string(let style) = arguments[0], arguments.count <= 2 else {
                request.reject("expects ,s continuous or ,s discrete [,f settle_seconds]")
                return
            }
            switch (style, arguments.count) {
            case ("continuous", 1):
                config.deliveryStyle = .continuous
            case ("continuous", _):
                request.reject("continuous delivery takes no settle time")
                return
            case ("discrete", 1):
                config.deliveryStyle = .discrete()
            case ("discrete", 2):
                guard let seconds = arguments[1].numericValue else {
                    request.reject("settle time must be a number of seconds")
                    return
                }
                guard seconds.isFinite, seconds >= 0.001, seconds <= 10 else {
                    request.reject("settle time must be 0.001…10 s, got \(seconds)")
                    return
                }
                config.deliveryStyle = .discrete(settleTime: .milliseconds(Int64((seconds * 1000).rounded())))
            default:
                request.reject("unknown delivery style '\(style)' (continuous or discrete [settle_seconds])")
                return
            }
            do {
                try config.validate()
            } catch {
                request.reject("\(error)")
                return
            }
            runtime.config = config
            request.surface.stateKeeper?.persist()
        }
        request.reply(OSCMessage("/config/delivery", deliveryArguments(runtime.config)))
    }

    static func deliveryArguments(_ config: ProcessingConfig) -> [OSCArgument] {
        switch config.deliveryStyle {
        case .continuous: [.string("continuous"), .float(0)]
        case .discrete(let settle): [.string("discrete"), .float(Float(settle.seconds))]
        }
    }

    /// Its reply has the form of a request (a set), so it is never recognised as a reply.
    static let timeout = OSCCommand(
        OSCCommandDescription(
            "/config/timeout", section: .configuration,
            summary: "How long a change may take to be applied before it ends `failed` (default 10 s). "
                + "Without arguments, queries.",
            arguments: [Arg("f", "seconds", "the apply timeout, 0.01…600 s.", optional: true)],
            reply: "`/config/timeout ,f seconds`.",
            errors: ["not a number within 0.01…600 s"],
            examples: ["oscsend localhost 7700 /config/timeout f 2"]),
        requests: [.bare("/config/timeout"), OSCMessageForm("/config/timeout", .exactly([.any]))],
        replies: [OSCMessageForm("/config/timeout", .exactly([.float]))],
        handle: answerTimeout)

    /// `/config/timeout ,f seconds`; no argument queries.
    private static func answerTimeout(_ request: OSCCommandRequest) {
        let runtime = request.surface.runtime
        if !request.arguments.isEmpty {
            guard request.arguments.count == 1, let seconds = request.arguments[0].numericValue else {
                request.reject("expects ,f seconds")
                return
            }
            guard seconds.isFinite, seconds >= 0.01, seconds <= 600 else {
                request.reject("timeout must be 0.01…600 s, got \(seconds)")
                return
            }
            var config = runtime.config
            config.deliveryTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
            runtime.config = config
            request.surface.stateKeeper?.persist()
        }
        request.reply(OSCMessage("/config/timeout", [.float(Float(runtime.config.deliveryTimeout.seconds))]))
    }

    /// Its reply has the form of a request (a set), so it is never recognised as a reply.
    static let maximumOutput = OSCCommand(
        OSCCommandDescription(
            "/config/max_output", section: .configuration,
            summary: "The output safety limit in dB SPL (default 100): a limiter at the end of the chain, in every "
                + "mode, never lets an output sample exceed this level (through the calibration: the dB SPL a "
                + "full-scale sine stands for). No latency; transparent below the limit. `/status` reports the "
                + "largest reduction (`output_limit_db`). Without arguments, queries.",
            arguments: [Arg("f", "spl", "the maximum output, 40…130 dB SPL.", optional: true)],
            reply: "`/config/max_output ,f spl`.",
            errors: ["not a number within 40…130"],
            examples: ["oscsend localhost 7700 /config/max_output f 90"]),
        requests: [.bare("/config/max_output"), OSCMessageForm("/config/max_output", .exactly([.any]))],
        replies: [OSCMessageForm("/config/max_output", .exactly([.float]))],
        handle: answerMaximumOutput)

    /// `/config/max_output ,f spl`; no argument queries.
    private static func answerMaximumOutput(_ request: OSCCommandRequest) {
        let runtime = request.surface.runtime
        if !request.arguments.isEmpty {
            let range = SoundFitRuntime.maximumOutputRange
            guard request.arguments.count == 1, let spl = request.arguments[0].numericValue else {
                request.reject("expects ,f spl (dB SPL)")
                return
            }
            guard spl.isFinite, range.contains(spl) else {
                request.reject("maximum output must be \(Int(range.lowerBound))…\(Int(range.upperBound)) dB SPL, got \(spl)")
                return
            }
            runtime.maximumOutputSPL = spl
        }
        request.reply(OSCMessage("/config/max_output", [.float(Float(runtime.maximumOutputSPL))]))
    }
}

extension OSCCommandTable {
    /// Its reply has the form of a request (a set), so it is never recognised as a reply.
    static let calibration = OSCCommand(
        OSCCommandDescription(
            "/config/calibration", section: .configuration,
            summary: "The calibration in dB SPL (default 100): the level a full-scale sine stands for at the ear. "
                + "Personalization presets are generated for it (a change generates the session's preset again and "
                + "applies it; subscribers get `/invalidated /processing/preset calibration_changed`) and the output "
                + "safety limit is reached through it. A document-level setting: saved in `document.json` (with a "
                + "state directory), read at the next start unless `--calibration` is given, carried by "
                + "`soundfit state export`/`import`. Without arguments, queries.",
            arguments: [Arg("f", "db_spl", "the calibration, 80…130 dB SPL.", optional: true)],
            reply: "`/config/calibration ,f db_spl`, once the preset was regenerated and applied.",
            errors: ["not a number within 80…130",
                     "the regenerated preset could not be applied (the calibration is changed and saved all the same)"],
            examples: ["oscsend localhost 7700 /config/calibration f 105"]),
        requests: [.bare("/config/calibration"), OSCMessageForm("/config/calibration", .exactly([.any]))],
        replies: [OSCMessageForm("/config/calibration", .exactly([.float]))],
        handle: answerCalibration)

    /// `/config/calibration ,f db_spl`; no argument queries.
    private static func answerCalibration(_ request: OSCCommandRequest) {
        let surface = request.surface
        let reply: @Sendable () -> OSCMessage = { OSCMessage("/config/calibration", [.float(Float(surface.runtime.calibration))]) }
        guard !request.arguments.isEmpty else {
            request.reply(reply())
            return
        }
        let range = PresetPayload.calibrationRange
        guard request.arguments.count == 1, let calibration = request.arguments[0].numericValue else {
            request.reject("expects ,f db_spl (dB SPL)")
            return
        }
        guard calibration.isFinite, range.contains(calibration) else {
            request.reject("calibration must be \(Int(range.lowerBound))…\(Int(range.upperBound)) dB SPL, got \(calibration)")
            return
        }
        request.answerLater {
            if let keeper = surface.stateKeeper {
                try await keeper.setCalibration(calibration)
            } else {
                try await surface.runtime.setCalibration(calibration)
            }
            request.reply(reply())
        }
    }
}
