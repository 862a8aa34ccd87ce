import OSCCore
import SoundFitHearing
import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime

/// `/config/delivery`, `/config/timeout`, `/config/applicators`, `/config/max_output`,
/// `/config/calibration`.
extension OSCCommandTable {
    static let configuration = [delivery, timeout, applicators, maximumOutput, calibration]

    /// The reply ends in `,s seconds`, which no request carries: a reply sent back to SoundFit
    /// (or to another SoundFit, by a forged source) is never taken for a set and answered in
    /// turn. `,s continuous ,f 0`, the reply before the unit, is still recognised.
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
            reply: "`/config/delivery ,s style ,f settle_seconds ,s seconds` (the unit last: a reply is never a request).",
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
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["continuous", "discrete"]), .float,
                                                         .string(oneOf: [secondsUnit])])),
            OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["continuous"]), .floatValue(0)])),
        ],
        prepare: prepareDelivery)

    /// `/config/delivery ,s continuous` or `,s discrete [,f settle_seconds]`; no argument queries.
    private static func prepareDelivery(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let runtime = request.surface.runtime
        let arguments = request.arguments
        guard !arguments.isEmpty else {
            return .perform { request.reply(OSCMessage("/config/delivery", deliveryArguments(runtime.config))) }
        }
        guard case .string(let style) = arguments[0], arguments.count <= 2 else {
            return .reject("expects ,s continuous or ,s discrete [,f settle_seconds]")
        }
        let deliveryStyle: DeliveryConfiguration.DeliveryStyle
        switch (style, arguments.count) {
        case ("continuous", 1):
            deliveryStyle = .continuous
        case ("continuous", _):
            return .reject("continuous delivery takes no settle time")
        case ("discrete", 1):
            deliveryStyle = .discrete()
        case ("discrete", 2):
            guard let seconds = arguments[1].numericValue else {
                return .reject("settle time must be a number of seconds")
            }
            guard seconds.isFinite, seconds >= 0.001, seconds <= 10 else {
                return .reject("settle time must be 0.001…10 s, got \(seconds)")
            }
            deliveryStyle = .discrete(settleTime: .milliseconds(Int64((seconds * 1000).rounded())))
        default:
            return .reject("unknown delivery style '\(style)' (continuous or discrete [settle_seconds])")
        }
        var checked = runtime.config
        checked.deliveryStyle = deliveryStyle
        do {
            try checked.validate()
        } catch {
            return .reject("\(error)")
        }
        return .perform {
            var config = runtime.config
            config.deliveryStyle = deliveryStyle
            runtime.config = config
            request.surface.stateKeeper?.persist()
            request.reply(OSCMessage("/config/delivery", deliveryArguments(runtime.config)))
        }
    }

    /// Why a configuration set was refused: its `/error` reason.
    struct SettingRefusal: Error {
        let reason: String
    }

    /// The one number a configuration set carries, checked against `range` as received. The
    /// refusal names the setting, the range (`rangeText`, default: whole dB SPL) and the form.
    static func setting(_ request: OSCCommandRequest, _ name: String, within range: ClosedRange<Double>,
                        rangeText: String? = nil, form: String) throws(SettingRefusal) -> Double {
        guard request.arguments.count == 1, let value = request.arguments[0].numericValue else {
            throw SettingRefusal(reason: "expects \(form)")
        }
        guard value.isFinite, range.contains(value) else {
            let text = rangeText ?? "\(Int(range.lowerBound))…\(Int(range.upperBound)) dB SPL"
            throw SettingRefusal(reason: "\(name) must be \(text), got \(value)")
        }
        return value
    }

    /// The unit that ends the replies of `/config/delivery` and `/config/timeout`.
    static let secondsUnit = "seconds"
    /// The unit that ends the reply of `/config/max_output`.
    static let splUnit = "dB SPL"

    static func deliveryArguments(_ config: DeliveryConfiguration) -> [OSCArgument] {
        switch config.deliveryStyle {
        case .continuous: [.string("continuous"), .float(0), .string(secondsUnit)]
        case .discrete(let settle): [.string("discrete"), .float(Float(settle.seconds)), .string(secondsUnit)]
        }
    }

    /// Its reply ends in `,s seconds`, so it is not a set: never answered when it comes back.
    static let timeout = OSCCommand(
        OSCCommandDescription(
            "/config/timeout", section: .configuration,
            summary: "How long a change may take to be applied before it ends `failed` (default 10 s). "
                + "Without arguments, queries.",
            arguments: [Arg("f", "seconds", "the apply timeout, 0.01…600 s.", optional: true)],
            reply: "`/config/timeout ,f seconds ,s seconds` (the unit last: a reply is never a request).",
            errors: ["not a number within 0.01…600 s"],
            examples: ["oscsend localhost 7700 /config/timeout f 2"]),
        requests: [.bare("/config/timeout"), OSCMessageForm("/config/timeout", .exactly([.any]))],
        replies: [OSCMessageForm("/config/timeout", .exactly([.float, .string(oneOf: [secondsUnit])]))],
        prepare: prepareTimeout)

    /// `/config/timeout ,f seconds`; no argument queries.
    private static func prepareTimeout(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let runtime = request.surface.runtime
        let reply: @Sendable () -> Void = {
            request.reply(OSCMessage("/config/timeout", [.float(Float(runtime.config.deliveryTimeout.seconds)), .string(secondsUnit)]))
        }
        guard !request.arguments.isEmpty else { return .perform(reply) }
        let seconds: Double
        do {
            seconds = try setting(request, "timeout", within: 0.01...600, rangeText: "0.01…600 s", form: ",f seconds")
        } catch {
            return .reject(error.reason)
        }
        return .perform {
            var config = runtime.config
            config.deliveryTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
            runtime.config = config
            request.surface.stateKeeper?.persist()
            reply()
        }
    }

    /// Its replies go to other addresses, so they are never taken for a request.
    static let applicators = OSCCommand(
        OSCCommandDescription(
            "/config/applicators", section: .configuration,
            summary: "Lists the applicators of the session's parameters (`/processing/enabled`, `/processing/intensity`, "
                + "`/processing/preset`), each with its own apply timeout: the longest it may take to apply one value "
                + "(within the delivery timeout, `/config/timeout`, whichever ends first). An applicator that exceeds "
                + "it fails the change: `/state … failed` with a message naming the applicator, e.g. `the audio engine "
                + "did not apply the value within its apply timeout (3.0 seconds)`; the parameter keeps its value. The "
                + "audio engine waits for one audio cycle (3 s for enabled and intensity; 6 s for a preset, which is "
                + "prepared first). Without a session, the applicators the next session gets.",
            arguments: [],
            reply: "One `/config/applicator ,s address ,s applicator ,f apply_timeout ,s seconds` per applicator "
                + "(`apply_timeout` 0: only the delivery timeout), then `/config/applicators/end ,i count`.",
            errors: ["any argument"],
            examples: ["oscsend localhost 7700 /config/applicators"]),
        requests: [OSCMessageForm("/config/applicators", .any)],
        replies: [OSCMessageForm("/config/applicator", .any), OSCMessageForm("/config/applicators/end", .any)],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/config/applicators takes no arguments") }
            let controller = request.surface.runtime.controller
            return .perform {
                let applicators = controller.sessionApplicators
                for applicator in applicators {
                    request.reply(OSCMessage("/config/applicator", applicatorArguments(applicator)))
                }
                request.reply(OSCMessage("/config/applicators/end", [.int32(Int32(applicators.count))]))
            }
        })

    /// `/config/applicator ,s address ,s applicator ,f apply_timeout ,s seconds`.
    static func applicatorArguments(_ applicator: SessionApplicator) -> [OSCArgument] {
        [.string(ParameterModel.entry(for: applicator.parameter).address), .string(applicator.name ?? "unnamed"),
                .float(Float(applicator.applyTimeout?.seconds ?? 0)), .string(secondsUnit)]
    }

    /// Its reply ends in `,s dB SPL`, so it is not a set: never answered when it comes back.
    static let maximumOutput = OSCCommand(
        OSCCommandDescription(
            "/config/max_output", section: .configuration,
            summary: "The output safety limit in dB SPL (default 100): a limiter at the end of the chain, in every "
                + "mode, never lets an output sample exceed this level (through the calibration: the dB SPL a "
                + "full-scale sine stands for). No latency; transparent below the limit. `/status` reports the "
                + "largest reduction (`output_limit_db`). Without arguments, queries. "
                + "A safety property, not a setting: the ceiling chosen at start (`--max-output`) cannot be raised "
                + "from any surface — this lowers the limit and restores it up to the ceiling; and a calibration "
                + "lowered after the start never lifts the output's limit in dBFS above the start's (`/status` "
                + "reports `output_ceiling_spl` and the limit in force, `output_limit_dbfs`).",
            arguments: [Arg("f", "spl", "the maximum output, 40…130 dB SPL, at most the ceiling set at start.", optional: true)],
            reply: "`/config/max_output ,f spl ,s dB SPL` (the unit last: a reply is never a request).",
            errors: ["not a number within 40…130", "above the ceiling set at start (`--max-output`)"],
            examples: ["oscsend localhost 7700 /config/max_output f 90"]),
        requests: [.bare("/config/max_output"), OSCMessageForm("/config/max_output", .exactly([.any]))],
        replies: [OSCMessageForm("/config/max_output", .exactly([.float, .string(oneOf: [splUnit])]))],
        prepare: prepareMaximumOutput)

    /// `/config/max_output ,f spl`; no argument queries.
    private static func prepareMaximumOutput(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let runtime = request.surface.runtime
        let reply: @Sendable () -> Void = {
            request.reply(OSCMessage("/config/max_output", [.float(Float(runtime.maximumOutputSPL)), .string(splUnit)]))
        }
        guard !request.arguments.isEmpty else { return .perform(reply) }
        let spl: Double
        do {
            spl = try setting(request, "maximum output", within: SoundFitRuntime.maximumOutputRange, form: ",f spl (dB SPL)")
        } catch {
            return .reject(error.reason)
        }
        if let refusal = runtime.ceiling.refusal(maximumOutputSPL: spl) { return .reject(refusal) }
        return .perform {
            runtime.maximumOutputSPL = spl
            reply()
        }
    }
}

extension OSCCommandTable {
    /// Its reply ends in `,s dB SPL`, so it is not a set: never answered when it comes back.
    static let calibration = OSCCommand(
        OSCCommandDescription(
            "/config/calibration", section: .configuration,
            summary: "The calibration in dB SPL (default 100): the level a full-scale sine stands for at the ear. "
                + "Personalization presets are generated for it (a change generates the session's preset again and "
                + "applies it; subscribers get `/invalidated /processing/preset calibration_changed`) and the output "
                + "safety limit is reached through it. A document-level setting: saved in `document.json` (with a "
                + "state directory), read at the next start unless `--calibration` is given, carried by "
                + "`soundfit state export`/`import`. Without arguments, queries. A lower calibration puts the same dB "
                + "SPL higher in dBFS: the output's limit stays at or below the start's in dBFS (the ceiling, see "
                + "`/config/max_output`; `/status` reports the limit in force, `output_limit_dbfs`).",
            arguments: [Arg("f", "db_spl", "the calibration, 80…130 dB SPL.", optional: true)],
            reply: "`/config/calibration ,f db_spl ,s dB SPL`, once the preset was regenerated and applied.",
            errors: ["not a number within 80…130",
                     "the regenerated preset could not be applied (the calibration is changed and saved all the same)"],
            examples: ["oscsend localhost 7700 /config/calibration f 105"]),
        requests: [.bare("/config/calibration"), OSCMessageForm("/config/calibration", .exactly([.any]))],
        replies: [OSCMessageForm("/config/calibration", .exactly([.float, .string(oneOf: [splUnit])]))],
        prepare: prepareCalibration)

    /// `/config/calibration ,f db_spl`; no argument queries.
    private static func prepareCalibration(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let surface = request.surface
        let reply: @Sendable () -> Void = {
            request.reply(OSCMessage("/config/calibration", [.float(Float(surface.runtime.calibration)), .string(splUnit)]))
        }
        guard !request.arguments.isEmpty else { return .perform(reply) }
        let calibration: Double
        do {
            calibration = try setting(request, "calibration", within: PresetPayload.calibrationRange, form: ",f db_spl (dB SPL)")
        } catch {
            return .reject(error.reason)
        }
        return .perform {
            request.answerLater {
                if let keeper = surface.stateKeeper {
                    try await keeper.setCalibration(calibration)
                } else {
                    try await surface.runtime.setCalibration(calibration)
                }
                reply()
            }
        }
    }
}
