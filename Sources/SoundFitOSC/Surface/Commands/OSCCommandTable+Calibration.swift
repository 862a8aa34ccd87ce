import OSCCore
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime

/// `/calibration*`: calibration you can do with a sound level meter on an artificial ear or
/// coupler (`Calibrator`): a steady tone per ear and frequency, the meter's reading, the table
/// of corrections (measured − nominal) the hearing test, and the output limit, then use.
extension OSCCommandTable {
    static let calibrationCommands = [calibrationReport, calibrationTone, calibrationStop, calibrationMeasured, calibrationReset]

    /// The last argument of the replies that carry a level in dBFS or a correction in dB.
    static let dBFSUnit = "dBFS"
    static let correctionUnit = "dB"

    /// `/calibration ,s earphone ,s name ,s left [,f hz ,f db …] ,s right [,f hz ,f db …]`.
    static let calibrationReply = OSCMessageForm("/calibration", .atLeast(1))

    static let calibrationReport = OSCCommand(
        OSCCommandDescription(
            "/calibration", section: .hearingTest,
            summary: "Reports the calibration table: the earphone table in use and, per ear, each calibrated "
                + "frequency with its correction (what the meter read − nominal, dB). Between calibrated "
                + "frequencies a correction is interpolated in log frequency, beyond them held flat; an ear "
                + "without points is not corrected. The hearing test's tones are played `correction` dB lower; "
                + "the output safety limit's single broadband limiter is lowered by the largest correction, so "
                + "the limit holds in dB SPL on every ear and frequency.",
            reply: "`/calibration ,s earphone ,s name ,s left [,f hz ,f db …] ,s right [,f hz ,f db …]`.",
            errors: ["any argument"],
            examples: ["oscsend localhost 7700 /calibration"]),
        requests: [OSCMessageForm("/calibration", .exactly([]))],
        replies: [calibrationReply],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/calibration takes no arguments (it reports the table)") }
            return .perform { request.reply(calibrationMessage(request.surface)) }
        })

    static let calibrationTone = OSCCommand(
        OSCCommandDescription(
            "/calibration/tone", section: .hearingTest,
            summary: "Plays a steady tone of a nominal level on one ear's channels until `/calibration/stop` (at "
                + "most 10 minutes), through the calibration and that ear's correction: put the earphone on the "
                + "artificial ear or coupler (IEC 60318) of a sound level meter and read it. The output plays "
                + "nothing else meanwhile. A new tone replaces the one playing.",
            arguments: [
                Arg("s", "ear", "`left` or `right`."),
                Arg("f", "hz", "125 … 8000."),
                Arg("f", "db_spl", "the nominal level, dB SPL, at most the output safety limit (`/config/max_output`)."),
            ],
            reply: "`/calibration/tone ,s ear ,f hz ,f db_spl ,f level ,s dBFS` (the peak level played).",
            errors: [
                "a bad ear, frequency or level", "a level above the output safety limit (the limit is named)",
                "a level the output cannot reach unclipped (the most it plays is named)",
                "a hearing test is running", "not connected to JACK",
            ],
            examples: ["oscsend localhost 7700 /calibration/tone sff left 1000 70"]),
        requests: [OSCMessageForm("/calibration/tone", .notEndingIn(dBFSUnit))],
        replies: [OSCMessageForm("/calibration/tone", .endingIn(dBFSUnit))],
        prepare: prepareTone)

    static let calibrationStop = OSCCommand(
        OSCCommandDescription(
            "/calibration/stop", section: .hearingTest,
            summary: "Stops the calibration tone; the output returns to what it played before.",
            reply: "`/calibration/stop ,s stopped`.", errors: ["no calibration tone is playing", "any argument"],
            examples: ["oscsend localhost 7700 /calibration/stop"]),
        requests: [OSCMessageForm("/calibration/stop", .exactly([]))],
        replies: [OSCMessageForm("/calibration/stop", .atLeast(1))],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/calibration/stop takes no arguments") }
            return .perform {
                do {
                    try request.surface.calibrator.stop()
                } catch {
                    request.reject("\(error)")
                    return
                }
                request.reply(OSCMessage("/calibration/stop", [.string("stopped")]))
            }
        })

    static let calibrationMeasured = OSCCommand(
        OSCCommandDescription(
            "/calibration/measured", section: .hearingTest,
            summary: "Records what the meter read while the last `/calibration/tone` at that ear and frequency "
                + "played: the correction there grows by measured − nominal (the tone played through the "
                + "correction already in force), the output limit follows, and the table is kept in the state "
                + "directory. A tone still playing there is played again through the new correction, so the meter "
                + "should now read the nominal level.",
            arguments: [
                Arg("s", "ear", "`left` or `right`."),
                Arg("f", "hz", "the tone's frequency."),
                Arg("f", "db_spl", "the meter's reading, dB SPL (unweighted or Z-weighted)."),
            ],
            reply: "`/calibration/measured ,s ear ,f hz ,f correction ,s dB`, then the table (`/calibration`).",
            errors: [
                "a bad ear, frequency or level", "no tone was played at that ear and frequency",
                "a correction beyond ±40 dB (a wrong setup, not an earphone)", "the table could not be saved",
            ],
            examples: ["oscsend localhost 7700 /calibration/measured sff left 1000 76"]),
        requests: [OSCMessageForm("/calibration/measured", .notEndingIn(correctionUnit))],
        replies: [OSCMessageForm("/calibration/measured", .endingIn(correctionUnit))],
        prepare: prepareMeasured)

    static let calibrationReset = OSCCommand(
        OSCCommandDescription(
            "/calibration/reset", section: .hearingTest,
            summary: "Clears the calibration table (no correction on any ear) and keeps that.",
            reply: "The table, as `/calibration`.", errors: ["any argument", "the table could not be saved"],
            examples: ["oscsend localhost 7700 /calibration/reset"]),
        requests: [OSCMessageForm("/calibration/reset", .exactly([]))],
        replies: [calibrationReply],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/calibration/reset takes no arguments") }
            return .perform {
                request.answerLater {
                    try await request.surface.calibrator.reset()
                    request.reply(calibrationMessage(request.surface))
                }
            }
        })

    // MARK: Requests

    /// `,s ear ,f hz ,f db_spl`, checked; or the reason it is not.
    private static func earFrequencyLevel(_ request: OSCCommandRequest) -> Result<(Ear, Double, Double), ControlError> {
        let arguments = request.arguments
        guard arguments.count == 3 else {
            return .failure(ControlError("expects ,s ear ,f hz ,f db_spl, got \(request.message.typeTags)"))
        }
        guard case .string(let name) = arguments[0], let ear = Ear(rawValue: name) else {
            return .failure(ControlError("ear: expected left or right"))
        }
        guard let hz = arguments[1].numericValue else { return .failure(ControlError("hz: expected a number")) }
        guard let level = arguments[2].numericValue else { return .failure(ControlError("db_spl: expected a number")) }
        guard hz.isFinite, CalibrationTable.frequencyRange.contains(hz) else {
            return .failure(ControlError(CalibrationTableError.badFrequency(hz).description))
        }
        guard level.isFinite, CalibrationTable.levelRange.contains(level) else {
            return .failure(ControlError(CalibrationTableError.badLevel(name: "db_spl", level: level).description))
        }
        return .success((ear, hz, level))
    }

    private static func prepareTone(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let checked: (Ear, Double, Double)
        switch earFrequencyLevel(request) {
        case .success(let values): checked = values
        case .failure(let error): return .reject(error.description)
        }
        return .perform {
            let surface = request.surface
            let tone: Calibrator.Tone
            do {
                tone = try surface.calibrator.play(ear: checked.0, frequency: checked.1, level: checked.2,
                                                   hearingTestRunning: surface.hearingTest.state.isActive)
            } catch {
                request.reject("\(error)")
                return
            }
            request.reply(OSCMessage("/calibration/tone", [
                .string(tone.ear.rawValue), .float(Float(tone.frequency)), .float(Float(tone.level)),
                .float(Float(tone.fullScaleLevel)), .string(dBFSUnit),
            ]))
        }
    }

    private static func prepareMeasured(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let checked: (Ear, Double, Double)
        switch earFrequencyLevel(request) {
        case .success(let values): checked = values
        case .failure(let error): return .reject(error.description)
        }
        return .perform {
            request.answerLater {
                let surface = request.surface
                let correction = try await surface.calibrator.measured(ear: checked.0, frequency: checked.1, level: checked.2)
                request.reply(OSCMessage("/calibration/measured", [
                .string(checked.0.rawValue), .float(Float(checked.1)), .float(Float(correction)), .string(correctionUnit),
                ]))
                request.reply(calibrationMessage(surface))
            }
        }
    }

    /// Keeps the hearing test's earphone table with the calibration (`calibration.json`):
    /// after `/test/earphone` or `/test/config earphone`.
    static func keepEarphone(_ surface: OSCControlSurface) throws {
        surface.calibrator.earphone = surface.hearingTest.settings.earphone
        try surface.calibrator.save()
    }

    // MARK: Messages

    static func calibrationMessage(_ surface: OSCControlSurface) -> OSCMessage {
        let table = surface.runtime.calibrationTable
        var arguments: [OSCArgument] = [.string("earphone"), .string(surface.hearingTest.settings.earphone.name)]
        for ear in [Ear.left, .right] {
            arguments.append(.string(ear.rawValue))
            for point in table.points(ear) {
                arguments += [.float(Float(point.frequency)), .float(Float(point.correction))]
            }
        }
        return OSCMessage("/calibration", arguments)
    }
}
