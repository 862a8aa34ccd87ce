import OSCCore
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime

/// `/test/*`: the hearing test in the graph (`HearingTestRunner`), and the reports it sends.
///
/// States and results go to the client that started the test and to subscribers; a command's
/// sender that gets neither is answered with the state directly. Every one of these surfaces may
/// be the listener's: nothing goes out between a presentation's scheduling and the end of its
/// response window, and never a level (see `HearingTestRunner`). No surface shows live levels.
extension OSCCommandTable {
    static let hearingTest = [
        testStart, testHeard, testPause, testResume, testCancel, testStatus, testConfig, testEarphone,
        testSubmit, testExport, testImport, testStateReport, testResultReport, testNoResponseReport, testMaskingDilemmaReport,
    ]

    /// `/test/state ,s state [,s key value …]`.
    static let testStateReply = OSCMessageForm("/test/state", .atLeast(1))

    static let testStart = OSCCommand(
        OSCCommandDescription(
            "/test/start", section: .hearingTest,
            summary: "Starts the hearing test: automated pure-tone audiometry (modified Hughson-Westlake: 10 dB down "
                + "after a response, 5 dB up after a miss, threshold = the lowest level heard on 2 of 3 ascending "
                + "presentations), 1 kHz first, then upwards, downwards and a 1 kHz retest, per ear. The session is "
                + "interrupted (reason `hearing test`) and the output plays only the tones until the test ends. When "
                + "it is done the result becomes the hearing profile, as with `/profile/audiogram`, only when every "
                + "tested ear's result is reliable and complete; otherwise it is kept, reported with its reasons "
                + "(`/test/state done profile not_submitted reason …`) and applied only by `/test/submit`. Nothing is "
                + "reported while a presentation is under way: `running` comes after each response window closes "
                + "(tones and catch trials alike), without the level; the levels are in the test's record "
                + "(`hearing-tests/<date>.json` in the state directory) and no surface shows them live.",
            arguments: [
                Arg("s", "ear", "`left`, `right` or `both` (default).", optional: true),
                Arg("f|s", "hz … key value …", "the frequencies, standard audiometric ones within 125 … 8000 Hz "
                    + "(default 250, 500, 1000, 2000, 3000, 4000, 6000, 8000; for the result to become the profile it "
                    + "needs 500, 1000, 2000 and 4000 Hz), then key value pairs of strings: `listener` ID (kept in the "
                    + "record and the FHIR export), `seed` N (the seed of the test's randomness, decimal; default a "
                    + "random one, kept in the record).", optional: true, repeats: true),
            ],
            reply: "`/session/interrupted ,i 1`, then `/test/state ,s running …` and the later states; "
                + "to subscribers too.",
            errors: [
                "unknown ear", "a nonstandard, repeated or out-of-range frequency", "a test is already running",
                "no processing session (not connected to JACK)",
                "the JACK server is freewheeling (tones would play faster than real time; a running test is "
                    + "cancelled when freewheeling starts)",
            ],
            examples: ["oscsend localhost 7700 /test/start s both", "oscsend localhost 7700 /test/start sff left 1000 4000",
                       "oscsend localhost 7700 /test/start sss both listener P017"]),
        requests: [OSCMessageForm("/test/start", .any)],
        replies: [testStateReply],
        prepare: prepareStart)

    static let testHeard = OSCCommand(
        OSCCommandDescription(
            "/test/heard", section: .hearingTest,
            summary: "The listener heard a tone (any button). It counts for the presentation whose response window "
                + "(`window_start` … `window_end` after the onset) is open; any other press is a false alarm, "
                + "counted against the reliability.",
            reply: "Nothing while a test runs (a reply would tell the listener whether a tone was playing).",
            errors: ["no test is running"],
            examples: ["oscsend localhost 7700 /test/heard"]),
        requests: [OSCMessageForm("/test/heard", .any)],
        replies: [OSCMessageForm("/error", .any)],
        prepare: { request in
            command(request) { try $0.heard() }
        })

    static let testPause = OSCCommand(
        OSCCommandDescription(
            "/test/pause", section: .hearingTest,
            summary: "Pauses the test: the tone stops; the presentation under way is repeated after `/test/resume`.",
            reply: "`/test/state ,s paused`.", errors: ["no test is running"],
            examples: ["oscsend localhost 7700 /test/pause"]),
        requests: [OSCMessageForm("/test/pause", .any)], replies: [testStateReply],
        prepare: { request in
            command(request) { try $0.pause() }
        })

    static let testResume = OSCCommand(
        OSCCommandDescription(
            "/test/resume", section: .hearingTest,
            summary: "Resumes a paused test.",
            reply: "`/test/state ,s running …`.", errors: ["the test is not paused"],
            examples: ["oscsend localhost 7700 /test/resume"]),
        requests: [OSCMessageForm("/test/resume", .any)], replies: [testStateReply],
        prepare: { request in
            command(request) { try $0.resume() }
        })

    static let testCancel = OSCCommand(
        OSCCommandDescription(
            "/test/cancel", section: .hearingTest,
            summary: "Cancels the test: nothing is submitted, the interruption is resolved and the sound returns "
                + "to what it was.",
            reply: "`/test/state ,s cancelled`, after `/session/interrupted ,i 0`.", errors: ["no test is running"],
            examples: ["oscsend localhost 7700 /test/cancel"]),
        requests: [OSCMessageForm("/test/cancel", .any)], replies: [testStateReply],
        prepare: { request in
            command(request) { try $0.cancel() }
        })

    static let testStatus = OSCCommand(
        OSCCommandDescription(
            "/test/status", section: .hearingTest,
            summary: "The hearing test's state.",
            reply: "`/test/state ,s state [,s key value …]` (see the report below).",
            examples: ["oscsend localhost 7700 /test/status"]),
        requests: [OSCMessageForm("/test/status", .any)], replies: [testStateReply],
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/test/status takes no arguments") }
            return .perform { request.reply(testStateMessage(request.surface.hearingTest.state)) }
        })

    static let testConfig = OSCCommand(
        OSCCommandDescription(
            "/test/config", section: .hearingTest,
            summary: "Sets (key value pairs) or, with no argument, reports the hearing test's timing and stimulus "
                + "for the next test. The minimums allow a presentation every 2 s or faster. A level the output "
                + "cannot reach within the output safety limit (`/config/max_output`) is not presented: that "
                + "frequency is reported without response at the maximum.",
            arguments: [
                Arg("s", "key", "`tone_seconds` (0.2 … 5, default 1), `window_start` (0.05 … 1, default 0.15), "
                    + "`window_end` (0.4 … 5, default 1.5; the response window after each onset), `gap_min`, "
                    + "`gap_max` (0.1 … 10, default 1.5 and 3: the random silence between presentations), `stimulus` "
                    + "(`steady` or `pulsed`), `max_db_hl` (−10 … 120, default 90), `earphone` (the name of the "
                    + "earphone table in use, or of a known one: TDH-39 (default), DD45, DD65v2, HDA200, HD300, ER-3A, "
                    + "ER-3A-HA2; see `/test/earphone`).",
                    optional: true, repeats: true),
                Arg("f|s", "value", "the key's value.", optional: true, repeats: true),
            ],
            reply: "`/test/config` with every key and its value, then `,s current` (so the reply is never taken for a "
                + "request: a set never ends in it).",
            errors: ["unknown key", "a value of the wrong type or out of range", "a test is running"],
            examples: ["oscsend localhost 7700 /test/config sfsfsfsfsf tone_seconds 0.2 window_start 0.05 window_end 0.4 gap_min 0.1 gap_max 0.2"]),
        requests: [OSCMessageForm("/test/config", .notEndingIn(currentSettingsMarker))],
        replies: [OSCMessageForm("/test/config", .endingIn(currentSettingsMarker))],
        prepare: prepareConfig)

    static let testEarphone = OSCCommand(
        OSCCommandDescription(
            "/test/earphone", section: .hearingTest,
            summary: "Sets or, with no argument, reports the earphone's RETSPL table: the dB SPL that 0 dB HL stands "
                + "for at each frequency (interpolated in log frequency between entries). Default: the TDH-39 type "
                + "(ISO 389-1). A name alone selects a known table, each from the standard or sheet cited in "
                + "`EarphoneTable+Catalogue.swift`: TDH-39, DD45, DD65v2, HDA200, HD300, ER-3A (IEC 60318-4 ear simulator), "
                + "ER-3A-HA2 (HA-2 coupler). The table is kept with the calibration (`calibration.json`).",
            arguments: [
                Arg("s", "name", "a name for the table, or a known table's name alone.", optional: true),
                Arg("f", "hz", "a frequency.", optional: true, repeats: true),
                Arg("f", "db_spl", "RETSPL there, −20 … 120 dB SPL.", optional: true, repeats: true),
            ],
            reply: "`/test/earphone ,s name ,f hz ,f db_spl … ,s dB SPL` (ending in its unit, so it is never taken for a set).",
            errors: ["an unknown name alone", "odd pairs, or values out of range", "a test is running"],
            examples: ["oscsend localhost 7700 /test/earphone s DD65v2",
                       "oscsend localhost 7700 /test/earphone sffff my-headphones 1000 7 4000 9.5"]),
        requests: [OSCMessageForm("/test/earphone", .notEndingIn(splUnit))],
        replies: [OSCMessageForm("/test/earphone", .endingIn(splUnit))],
        prepare: prepareEarphone)

    static let testSubmit = OSCCommand(
        OSCCommandDescription(
            "/test/submit", section: .hearingTest,
            summary: "Applies the last finished test's result as the hearing profile although the gate kept it "
                + "(unreliable, or incomplete: not 500, 1000, 2000 and 4000 Hz in each tested ear): a person decided "
                + "so. The profile takes each ear's points as the automatic path does.",
            reply: "`/test/state ,s done ,s profile ,s submitted`; to subscribers too.",
            errors: ["a test is running", "no finished test", "the profile refuses the result (e.g. no threshold at a frequency it needs)"],
            examples: ["oscsend localhost 7700 /test/submit"]),
        requests: [OSCMessageForm("/test/submit", .exactly([]))], replies: [testStateReply],
        prepare: { request in
            let surface = request.surface
            return .perform {
                request.answerLater {
                    try await surface.hearingTest.submitLast()
                    guard !surface.receivesHearingTestReports(request.sender) else { return }
                    request.reply(testStateMessage(surface.hearingTest.state))
                }
            }
        })

    static let testExport = OSCCommand(
        OSCCommandDescription(
            "/test/export", section: .hearingTest,
            summary: "The last finished test's audiogram as an HL7 FHIR R4 Observation (JSON): LOINC panel 89015-2, "
                + "one component per ear and frequency (LOINC \"Hearing threshold Ear - left|right --N Hz\"), a "
                + "no-response as `valueQuantity` with `comparator` `>` the highest level presented. Also over HTTP: "
                + "`GET /hearing-test/fhir`.",
            reply: "`/test/export ,s json`.",
            errors: ["no finished test"],
            examples: ["oscsend localhost 7700 /test/export"]),
        requests: [OSCMessageForm("/test/export", .exactly([]))],
        replies: [OSCMessageForm("/test/export", .exactly([.string()]))],
        prepare: { request in
            let runner = request.surface.hearingTest
            return .perform {
                guard let export = runner.lastExport else {
                    request.reject("no finished hearing test to export (/test/start one)")
                    return
                }
                request.reply(OSCMessage("/test/export", [.string(export)]))
            }
        })

    static let testImport = OSCCommand(
        OSCCommandDescription(
            "/test/import", section: .hearingTest,
            summary: "Takes an audiogram from an HL7 FHIR R4 Observation (JSON; its LOINC hearing-threshold "
                + "components, a `>` comparator marking a no-response) as the hearing profile, as `/profile/audiogram` "
                + "does; an ear the Observation does not carry keeps its audiogram.",
            arguments: [Arg("s", "json", "the Observation.")],
            reply: "One `/profile/audiogram ,s ear ,f hz ,f db_hl … ,s dB HL` per ear: the profile now.",
            errors: ["not JSON, not an Observation, no hearing-threshold component, a value without a number",
                     "a test is running", "the profile refuses the audiogram (e.g. no threshold at 500, 1000, 2000 or 4000 Hz)"],
            examples: ["oscsend localhost 7700 /test/import s \"$(<audiogram.fhir.json)\""]),
        requests: [OSCMessageForm("/test/import", .exactly([.string()]))],
        replies: [OSCMessageForm("/profile/audiogram", .endingIn(hearingLevelUnit))],
        prepare: { request in
            guard case .string(let text)? = request.arguments.first else { return .reject("expects ,s json") }
            let results: [PureToneAudiometry.EarResult]
            do {
                results = HearingTestFHIR.results(try HearingTestFHIR.audiograms(json: text))
            } catch {
                return .reject("\(error)")
            }
            let surface = request.surface
            return .perform {
                request.answerLater {
                    guard !surface.hearingTest.state.isActive else { throw ControlError("a hearing test is running") }
                    let runtime = surface.runtime
                    let current = runtime.presets.profile
                    var left = current?.left, right = current?.right
                    for result in results {
                        let audiogram = try Audiogram(result.profilePoints.map { ($0.frequency, $0.level) })
                        if result.ear == .left { left = audiogram } else { right = audiogram }
                    }
                    try await runtime.submitProfile(try HearingProfile(left: left, right: right))
                    guard let profile = runtime.presets.profile else { return }
                    for ear in Ear.allCases {
                        request.reply(OSCMessage("/profile/audiogram", [.string(ear.rawValue)]
                            + profile.audiogram(for: ear).points.flatMap { [OSCArgument.float(Float($0.frequency)), .float(Float($0.threshold))] }
                            + [.string(hearingLevelUnit)]))
                    }
                }
            }
        })

    static let testStateReport = OSCCommand(
        report: OSCCommandDescription(
            "/test/state", section: .reports,
            summary: "The hearing test's state: `idle`, `running` (keys `ear`, `hz` — what is being tested —, "
                + "`progress` 0 … 1; never the level), `paused`, `done` (key `profile`: `submitted`, or "
                + "`not_submitted` with `reason`: the gate's reasons, e.g. `left: unreliable`, then `/test/submit` "
                + "applies it), `cancelled` (keys `presentations` and `heard`: how many were presented, how many answered in their window), `failed` (key `reason`, e.g. `JACK server lost`).",
            arguments: [
                Arg("s", "state", "the state's name."),
                Arg("s", "key", "a detail's name.", optional: true, repeats: true),
                Arg("s|f", "value", "its value.", optional: true, repeats: true),
            ],
            reply: "To the client that started the test and to subscribers: when it starts, after each "
                + "presentation's response window closes (`running`, tones and catch trials alike — never between "
                + "a presentation's scheduling and the end of its window), and when the state changes otherwise.",
            examples: ["oscdump 9000    # /test/state ssssfsf running ear left hz 1000 progress 0.1"]),
        sends: [testStateReply])

    static let testResultReport = OSCCommand(
        report: OSCCommandDescription(
            "/test/result", section: .reports,
            summary: "One ear's result when the test is done: its thresholds (each a level that was presented) and "
                + "the reliability verdict — `unreliable` when the listener answered more than 10 % of the silent "
                + "catch trials (at least 2), pressed outside the response windows too often, or the 1 kHz retest "
                + "differs by more than 5 dB.",
            arguments: [
                Arg("s", "ear", "`left` or `right`."),
                Arg("s", "reliability", "`reliable` or `unreliable`."),
                Arg("f", "hz", "a frequency with a threshold.", repeats: true),
                Arg("f", "db_hl", "its threshold.", repeats: true),
            ],
            reply: "To the client that started the test and to subscribers, before the result becomes the profile.",
            examples: ["oscdump 9000    # /test/result ssffff left reliable 1000 15 2000 20"]),
        sends: [OSCMessageForm("/test/result", .atLeast(2))])

    static let testNoResponseReport = OSCCommand(
        report: OSCCommandDescription(
            "/test/no_response", section: .reports,
            summary: "The frequencies of one ear not heard at the maximum level (the configured `max_db_hl`, or "
                + "less where the output safety limit allows less): no threshold, not a number.",
            arguments: [Arg("s", "ear", "`left` or `right`."), Arg("f", "hz", "a frequency.", repeats: true)],
            reply: "After that ear's `/test/result`, only when there is such a frequency.",
            examples: ["oscdump 9000    # /test/no_response sf right 8000"]),
        sends: [OSCMessageForm("/test/no_response", .atLeast(1))])

    static let testMaskingDilemmaReport = OSCCommand(
        report: OSCCommandDescription(
            "/test/masking_dilemma", section: .reports,
            summary: "The frequencies of one ear where masking was needed (the threshold could be the other ear "
                + "hearing the tone across the head) and no plateau fitted before the noise would cross back and "
                + "mask the test ear itself, or before the output's highest masking level: the threshold there is "
                + "unknown. No number is reported or applied for them; the result is kept, not applied, until "
                + "`/test/submit`.",
            arguments: [Arg("s", "ear", "`left` or `right`."), Arg("f", "hz", "a frequency.", repeats: true)],
            reply: "After that ear's `/test/result` (and `/test/no_response`), only when there is such a frequency.",
            examples: ["oscdump 9000    # /test/masking_dilemma sf left 1000"]),
        sends: [OSCMessageForm("/test/masking_dilemma", .atLeast(1))])

    // MARK: Handlers

    /// `/test/start [,s ear] [,f hz …]`: the starter receives the states and results.
    private static func prepareStart(_ request: OSCCommandRequest) -> OSCCommandPlan {
        var arguments = request.arguments[...]
        var ears: [Ear] = [.left, .right]
        if case .string(let ear) = arguments.first {
            switch ear {
            case "left": ears = [.left]
            case "right": ears = [.right]
            case "both": break
            default: return .reject("unknown ear '\(ear)' (left, right or both)")
            }
            arguments = arguments.dropFirst()
        }
        // Then frequencies, then key value pairs (`listener ID`, `seed N`).
        let numbers = Array(arguments.prefix { $0.numericValue != nil }.map(\.numericValue))
        var listener: String?, seed: UInt64?
        let pairs = Array(arguments.dropFirst(numbers.count))
        guard pairs.count % 2 == 0 else {
            return .reject("expects [,s left|right|both] then frequencies in Hz, then key value pairs (listener, seed), "
                + "got \(request.message.typeTags)")
        }
        for index in stride(from: 0, to: pairs.count, by: 2) {
            guard case .string(let key) = pairs[index], case .string(let value) = pairs[index + 1] else {
                return .reject("expects [,s left|right|both] then frequencies in Hz, then key value pairs of strings "
                    + "(listener, seed), got \(request.message.typeTags)")
            }
            switch key {
            case "listener":
                guard !value.isEmpty, value.count <= 256 else { return .reject("listener: expected an id of 1 … 256 characters") }
                listener = value
            case "seed":
                guard let number = UInt64(value) else { return .reject("seed: expected a decimal 0 … 2^64-1, got \(value)") }
                seed = number
            default:
                return .reject("unknown key '\(key)' (listener, seed)")
            }
        }
        let frequencies = numbers.isEmpty ? PureToneAudiometry.defaultFrequencies : numbers.map { $0! }
        let surface = request.surface
        guard !surface.hearingTest.state.isActive else {
            return .reject("a hearing test is already running (/test/cancel it first)")
        }
        let testedEars = ears, listenerID = listener, testSeed = seed
        return .perform {
            surface.hearingTestStarter.withLock { $0 = request.sender }
            request.answerLater {
                try await surface.hearingTest.start(ears: testedEars, frequencies: frequencies, listener: listenerID, seed: testSeed)
            }
        }
    }

    /// A command without arguments; a sender who gets no state report is answered with the state.
    /// Whether the test is in a state that takes it is found when it is performed.
    private static func command(_ request: OSCCommandRequest,
                                _ body: @escaping @Sendable (HearingTestRunner) throws -> Void) -> OSCCommandPlan {
        guard request.arguments.isEmpty else { return .reject("\(request.address) takes no arguments") }
        return .perform {
            let surface = request.surface
            do {
                try body(surface.hearingTest)
            } catch {
                request.reject("\(error)")
                return
            }
            guard request.address != "/test/heard", !surface.receivesHearingTestReports(request.sender) else { return }
            request.reply(testStateMessage(surface.hearingTest.state))
        }
    }

    /// `/test/config [,s key value …]` → `/test/config` with every key.
    private static func prepareConfig(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let runner = request.surface.hearingTest
        var settings = runner.settings
        let arguments = request.arguments
        guard arguments.count % 2 == 0 else {
            return .reject("expects key value pairs, got \(request.message.typeTags)")
        }
        for index in stride(from: 0, to: arguments.count, by: 2) {
            guard case .string(let key) = arguments[index] else {
                return .reject("argument \(index + 1): expected a key (string)")
            }
            let value = arguments[index + 1]
            switch key {
            case "stimulus":
                guard case .string(let form) = value, ["steady", "pulsed"].contains(form) else {
                    return .reject("stimulus: expected steady or pulsed")
                }
                settings.isPulsed = form == "pulsed"
            case "earphone":
                guard case .string(let name) = value, name == settings.earphone.name || EarphoneTable.named(name) != nil else {
                    return .reject("earphone: expected '\(settings.earphone.name)' (in use) or one of \(EarphoneTable.catalogueNames) "
                        + "(set your own table with /test/earphone)")
                }
                if name != settings.earphone.name { settings.earphone = EarphoneTable.named(name)! }
            case "tone_seconds", "window_start", "window_end", "gap_min", "gap_max", "max_db_hl":
                guard let number = value.numericValue else {
                    return .reject("\(key): expected a number")
                }
                switch key {
                case "tone_seconds": settings.timing.toneSeconds = number
                case "window_start": settings.timing.windowStart = number
                case "window_end": settings.timing.windowEnd = number
                case "gap_min": settings.timing.gapMinimum = number
                case "gap_max": settings.timing.gapMaximum = number
                default: settings.maximumLevel = number
                }
            default:
                return .reject("unknown key '\(key)' (tone_seconds, window_start, window_end, gap_min, gap_max, "
                    + "stimulus, max_db_hl, earphone)")
            }
        }
        guard !arguments.isEmpty else { return .perform { request.reply(testConfigMessage(runner.settings)) } }
        do {
            try settings.validate()
        } catch {
            return .reject("\(error)")
        }
        let checked = settings
        return .perform {
            do {
                try runner.setSettings(checked)
                try keepEarphone(request.surface)
            } catch {
                request.reject("\(error)")
                return
            }
            request.reply(testConfigMessage(runner.settings))
        }
    }

    /// `/test/earphone [,s name ,f hz ,f db_spl …]` → `/test/earphone ,s name ,f hz ,f db_spl …`.
    private static func prepareEarphone(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let runner = request.surface.hearingTest
        let arguments = request.arguments
        let reply: @Sendable () -> Void = {
            let table = runner.settings.earphone
            request.reply(OSCMessage("/test/earphone", [.string(table.name)]
                + table.entries.flatMap { [OSCArgument.float(Float($0.frequency)), .float(Float($0.retspl))] } + [.string(splUnit)]))
        }
        guard !arguments.isEmpty else { return .perform(reply) }
        if arguments.count == 1, case .string(let name) = arguments[0] {
            guard let table = EarphoneTable.named(name) else {
                return .reject("unknown earphone '\(name)' (known: \(EarphoneTable.catalogueNames); or give your own table: "
                    + ",s name then pairs of numbers (hz, dB SPL))")
            }
            return .perform { setEarphone(table, request: request, reply: reply) }
        }
        let numbers = arguments.dropFirst().map(\.numericValue)
        guard case .string(let name) = arguments[0], !name.isEmpty, !numbers.isEmpty, numbers.count % 2 == 0,
              numbers.allSatisfy({ $0 != nil }) else {
            return .reject("expects ,s name then pairs of numbers (hz, dB SPL), got \(request.message.typeTags)")
        }
        let values = numbers.map { $0! }
        let table: EarphoneTable
        do {
            table = try EarphoneTable(name: name, entries: stride(from: 0, to: values.count, by: 2).map { (values[$0], values[$0 + 1]) })
        } catch {
            return .reject("\(error)")
        }
        return .perform { setEarphone(table, request: request, reply: reply) }
    }

    private static func setEarphone(_ table: EarphoneTable, request: OSCCommandRequest, reply: @Sendable () -> Void) {
        let runner = request.surface.hearingTest
        do {
            var settings = runner.settings
            settings.earphone = table
            try runner.setSettings(settings)
            try keepEarphone(request.surface)
        } catch {
            request.reject("\(error)")
            return
        }
        reply()
    }

    // MARK: Messages

    static func testStateMessage(_ state: HearingTestState) -> OSCMessage {
        var arguments: [OSCArgument] = [.string(state.name)]
        switch state {
        case .running(let ear, let frequency, let progress):
            arguments += [.string("ear"), .string(ear.rawValue), .string("hz"), .float(Float(frequency)),
                          .string("progress"), .float(Float(progress))]
        case .done(let refusal):
            arguments += [.string("profile"), .string(refusal == nil ? "submitted" : "not_submitted")]
            if let refusal { arguments += [.string("reason"), .string(refusal)] }
        case .failed(let reason):
            arguments += [.string("reason"), .string(reason)]
        case .cancelled(let presentations, let heard):
            arguments += [.string("presentations"), .float(Float(presentations)), .string("heard"), .float(Float(heard))]
        case .idle, .paused:
            break
        }
        return OSCMessage("/test/state", arguments)
    }

    static func testConfigMessage(_ settings: HearingTestSettings) -> OSCMessage {
        let timing = settings.timing
        return OSCMessage("/test/config", [
            .string("tone_seconds"), .float(Float(timing.toneSeconds)), .string("window_start"), .float(Float(timing.windowStart)),
            .string("window_end"), .float(Float(timing.windowEnd)), .string("gap_min"), .float(Float(timing.gapMinimum)),
            .string("gap_max"), .float(Float(timing.gapMaximum)), .string("stimulus"), .string(settings.isPulsed ? "pulsed" : "steady"),
            .string("max_db_hl"), .float(Float(settings.maximumLevel)), .string("earphone"), .string(settings.earphone.name),
            .string(currentSettingsMarker),
        ])
    }

    /// What ends `/test/config`'s reply: no set of the settings ends in it.
    static let currentSettingsMarker = "current"

    /// `/test/result` and, when some frequency had no response, `/test/no_response`, per ear.
    static func testResultMessages(_ record: HearingTestRecord) -> [OSCMessage] {
        record.results.flatMap { result -> [OSCMessage] in
            var messages = [OSCMessage("/test/result", [.string(result.ear.rawValue), .string(result.isReliable ? "reliable" : "unreliable")]
                + result.thresholds.flatMap { [OSCArgument.float(Float($0.frequency)), .float(Float($0.level))] })]
            if !result.noResponse.isEmpty {
                messages.append(OSCMessage("/test/no_response", [.string(result.ear.rawValue)] + result.noResponse.map { .float(Float($0)) }))
            }
            if !result.maskingDilemmas.isEmpty {
                messages.append(OSCMessage("/test/masking_dilemma",
                                           [.string(result.ear.rawValue)] + result.maskingDilemmas.map { .float(Float($0)) }))
            }
            return messages
        }
    }
}

extension OSCControlSurface {
    /// Whether `sender` gets the hearing test's reports anyway: it started the test, or subscribes.
    func receivesHearingTestReports(_ sender: OSCSender) -> Bool {
        hearingTestStarter.withLock { $0?.peer == sender.peer }
            || feedback.registry.subscribers.contains { $0.target == sender.peer || $0.owner == sender.peer }
    }

    /// Sends one event of the hearing test to its starter and to subscribers (the starter once).
    func forward(_ event: HearingTestEvent) {
        let messages: [OSCMessage]
        switch event {
        case .interrupted(let interrupted): messages = [OSCMessage("/session/interrupted", [.int32(interrupted ? 1 : 0)])]
        case .state(let state):
            messages = [OSCCommandTable.testStateMessage(state)]
            if case .done = state { stateKeeper?.persist() }
        case .results(let record): messages = OSCCommandTable.testResultMessages(record)
        case .notKept(let problem):
            logger.error("\(problem)")
            return
        case .submitted:
            stateKeeper?.persist()
            return
        }
        let starter = hearingTestStarter.withLock { $0 }
        for message in messages {
            // Results of both ears are two messages at one address: neither may replace the other.
            let distinction = message.address == "/session/interrupted" || message.address == "/test/state"
                ? "" : " " + (message.arguments.first.flatMap { if case .string(let ear) = $0 { ear } else { nil } } ?? "")
            // Queued for subscribers first: once the starter has a report, a subscriber's
            // `/sync` is answered after it.
            feedback.enqueue { $0.enqueueNotification(message, origin: starter?.peer, distinctBy: distinction) }
            if let starter { replies.send(message, to: starter) }
        }
    }
}
