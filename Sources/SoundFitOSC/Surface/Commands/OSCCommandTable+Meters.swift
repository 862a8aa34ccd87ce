import OSCCore
import SoundFitDSP
import SoundFitEngine

/// `/response`, `/meters/subscribe`, `/meters/unsubscribe`, and the meter messages.
extension OSCCommandTable {
    static let meters = [response, subscribeMeters, unsubscribeMeters, meterReports]

    /// The units that end the answers to `/response` (no request ends in them).
    static let frequencyUnit = "Hz"
    static let levelUnit = "dB"

    static let response = OSCCommand(
        OSCCommandDescription(
            "/response", section: .meters,
            summary: "The magnitude response of the whole chain per ear as it runs now, computed from the same design "
                + "the audio uses, at the running sample rate: the personalization's cascade at the band gains it "
                + "applies now (at the current input level and intensity), the filter's cookbook biquad, the output "
                + "gain. A bypassed stage contributes 0 dB. The ring modulator is not linear time-invariant "
                + "(it moves energy to other frequencies) and is left out; the answer says so when it is on. "
                + "The output safety limit is transparent below its ceiling and left out too. Frequencies are "
                + "log-spaced from 20 Hz to 20 kHz, both included; levels below \(Int(ChainResponse.floor)) dB (a notch's "
                + "centre) read \(Int(ChainResponse.floor)). (Over HTTP: `GET /response?points=N`.)",
            arguments: [Arg("i", "points", "how many frequencies, \(ChainResponse.pointRange.lowerBound)…"
                            + "\(ChainResponse.pointRange.upperBound) (default \(ChainResponse.defaultPoints)); at "
                            + "\(ChainResponse.pointRange.upperBound) the largest answer is about 4.2 kB.", optional: true)],
            reply: "`/response/stages ,f sample_rate ,s personalization ,s state ,s filter ,s state ,s ringmod ,s state "
                + ",s output ,s state` (state: `included`, `bypassed`, or `excluded` for an active ring modulator), then "
                + "`/response/frequencies ,f hz … ,s Hz`, `/response/left ,f db … ,s dB` and `/response/right ,f db … ,s dB` "
                + "(the first channel of a pair is the left ear), each ending in its unit.",
            errors: [
                "points not an integer in \(ChainResponse.pointRange.lowerBound)…\(ChainResponse.pointRange.upperBound)",
                "no audio system yet, or the engine runs no cycles",
            ],
            examples: ["oscsend localhost 7700 /response i 256"]),
        requests: [OSCMessageForm("/response", .any)],
        replies: [OSCMessageForm("/response/stages", .any),
                  OSCMessageForm("/response/frequencies", .endingIn(frequencyUnit)),
                  OSCMessageForm("/response/left", .endingIn(levelUnit)),
                  OSCMessageForm("/response/right", .endingIn(levelUnit))],
        prepare: prepareResponse)

    private static func prepareResponse(_ request: OSCCommandRequest) -> OSCCommandPlan {
        if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
        var points = ChainResponse.defaultPoints
        switch request.arguments.count {
        case 0: break
        case 1:
            guard case .int32(let value) = request.arguments[0], ChainResponse.pointRange.contains(Int(value)) else {
                return .reject("points: expects ,i \(ChainResponse.pointRange.lowerBound)…\(ChainResponse.pointRange.upperBound)")
            }
            points = Int(value)
        default:
            return .reject("expects no argument or ,i points, got \(request.message.typeTags)")
        }
        let runtime = request.surface.runtime
        let count = points
        return .perform {
            request.answerLater {
                let response = try await runtime.currentResponse(points: count)
                for message in responseMessages(response) { request.reply(message) }
            }
        }
    }

    /// The answer to `/response`: stages, frequencies, left, right.
    static func responseMessages(_ response: ChainResponse) -> [OSCMessage] {
        func floats(_ values: [Double], _ unit: String) -> [OSCArgument] {
            values.map { OSCArgument.float(Float($0)) } + [.string(unit)]
        }
        let stages: [OSCArgument] = [
            .float(Float(response.sampleRate)),
            .string("personalization"), .string(response.personalization.rawValue),
            .string("filter"), .string(response.filter.rawValue),
            .string("ringmod"), .string(response.ringModulator.rawValue),
            .string("output"), .string(response.outputGain.rawValue),
        ]
        return [OSCMessage("/response/stages", stages),
                OSCMessage("/response/frequencies", floats(response.frequencies, frequencyUnit)),
                OSCMessage("/response/left", floats(response.left, levelUnit)),
                OSCMessage("/response/right", floats(response.right, levelUnit))]
    }

    static let subscribeMeters = OSCCommand(
        OSCCommandDescription(
            "/meters/subscribe", section: .meters,
            summary: "Streams the live meters to the sender, over the transport it asked on, at `rate` messages per "
                + "second, for a lease of \(OSCMeterStream.lease.components.seconds) s: subscribing again renews it (and "
                + "may change the rate). The audio thread meters only while someone listens. At most "
                + "\(OSCMeterStream.capacity) streams, \(OSCMeterStream.maximumPerHost) per host; a listener whose sends "
                + "fail \(OSCMeterStream.maximumConsecutiveFailures) times in a row is dropped. On an exposed port the "
                + "stream draws on the sender's answer budget like every answer (see Security). Levels are measured "
                + "over the window since the previous message (peaks and gain reductions are the largest of the window); "
                + "nothing is sent while no audio runs.",
            arguments: [Arg("f|i", "rate", "messages per second, \(Int(OSCMeterStream.rateRange.lowerBound))…"
                            + "\(Int(OSCMeterStream.rateRange.upperBound)) (default \(Int(OSCMeterStream.defaultRate))).",
                            optional: true)],
            reply: "`/meters/subscribed ,f rate ,i lease_seconds`, then the stream (see `/meters/input`).",
            errors: [
                "rate not a number in \(Int(OSCMeterStream.rateRange.lowerBound))…\(Int(OSCMeterStream.rateRange.upperBound))",
                "the stream limit is reached, or this host holds \(OSCMeterStream.maximumPerHost) streams",
            ],
            examples: ["oscdump 9000 &", "oscsend localhost 7700 /meters/subscribe f 20   # from port 9000, e.g. with a surface"]),
        requests: [OSCMessageForm("/meters/subscribe", .any)],
        replies: [OSCMessageForm("/meters/subscribed", .any)],
        prepare: prepareSubscribeMeters)

    private static func prepareSubscribeMeters(_ request: OSCCommandRequest) -> OSCCommandPlan {
        if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
        var rate = OSCMeterStream.defaultRate
        switch request.arguments.count {
        case 0: break
        case 1:
            // Checked as received, before the conversion to Float: 30.0000001 would round into the range.
            let range = Double(OSCMeterStream.rateRange.lowerBound)...Double(OSCMeterStream.rateRange.upperBound)
            guard let value = request.arguments[0].numericValue, value.isFinite, range.contains(value) else {
                return .reject("rate: expects a number in \(Int(OSCMeterStream.rateRange.lowerBound))…"
                               + "\(Int(OSCMeterStream.rateRange.upperBound)) Hz")
            }
            rate = Float(value)
        default:
            return .reject("expects no argument or ,f rate, got \(request.message.typeTags)")
        }
        let granted = rate
        return .perform {
            do throws(MeterStreamError) {
                try request.surface.meters.subscribe(request.sender, rate: granted)
                request.reply(OSCMessage("/meters/subscribed",
                                         [.float(granted), .int32(Int32(OSCMeterStream.lease.components.seconds))]))
            } catch {
                request.reject(error.description)
            }
        }
    }

    static let unsubscribeMeters = OSCCommand(
        OSCCommandDescription(
            "/meters/unsubscribe", section: .meters,
            summary: "Ends the sender's meter stream.",
            reply: "`/meters/unsubscribed`.",
            errors: ["the sender has no meter stream", "arguments given"],
            examples: ["oscsend localhost 7700 /meters/unsubscribe"]),
        requests: [OSCMessageForm("/meters/unsubscribe", .any)],
        replies: [OSCMessageForm("/meters/unsubscribed", .any)],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("expects no arguments") }
            return .perform {
                if request.surface.meters.unsubscribe(request.sender) {
                    request.reply(OSCMessage("/meters/unsubscribed", []))
                } else {
                    request.reject("no meter stream for this sender")
                }
            }
        })

    static let meterReports = OSCCommand(
        report: OSCCommandDescription(
            "/meters/input", section: .reports,
            summary: "The meter stream (`/meters/subscribe`), at its rate: `/meters/input` and `/meters/output` carry "
                + "each channel's level over the window, `,f peak_dbfs ,f rms_dbfs` per channel in channel order "
                + "(0 dBFS: a full-scale sample; a full-scale sine reads 0 peak and −3.01 RMS; silence reads the floor, "
                + "\(Int(MeterReading.floor)) dBFS), the input measured before the chain, the output after it. Then one "
                + "`/meters/reduction ,i channel ,f db …` per channel (from 1): the personalization's gain reduction per "
                + "band (band order of the tech level), the largest of the window — how many dB the band's dynamics "
                + "(compression above the knee, expansion, the band output limit) take off the gain its law gives "
                + "below the knee, before intensity scales it; no values while the personalization is bypassed. "
                + "At most \(MeterMailbox.maximumChannels) channels are metered.",
            reply: "`/meters/input ,f peak ,f rms …`, `/meters/output ,f peak ,f rms …`, `/meters/reduction ,i channel ,f db …`",
            examples: ["oscdump 9000   # shows the stream once a client on port 9000 sent /meters/subscribe"]),
        sends: [OSCMessageForm("/meters/input", .any), OSCMessageForm("/meters/output", .any),
                OSCMessageForm("/meters/reduction", .any)])
}
