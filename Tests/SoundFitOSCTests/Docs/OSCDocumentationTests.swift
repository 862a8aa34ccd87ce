import SoundFitModel
import SoundFitEngine
@testable import SoundFitOSC
import Testing

@Suite struct OSCDocumentationTests {
    /// The engine's parameters plus descriptors shaped like the session's (`/processing/*`), so
    /// the generator is exercised on every kind and access.
    static let parameters: [ParameterDescriptor] = {
        let engine = EngineSlot.allCases.map(\.descriptor)
        return engine + sessionShaped.filter { session in !engine.contains { $0.address == session.address } }
    }()

    static let sessionShaped: [ParameterDescriptor] = [
        ParameterDescriptor(address: "/processing/enabled", kind: .bool, defaultValue: .bool(false), summary: "On/off."),
        ParameterDescriptor(address: "/processing/intensity", kind: .float(0...1), defaultValue: .float(0.5),
                            summary: "Intensity."),
        ParameterDescriptor(address: "/processing/preset", kind: .choice(["default", "up", "down", "none"]),
                            defaultValue: .choice("none"), summary: "Preset variant."),
        ParameterDescriptor(address: "/processing/fitting", kind: .int(1...4), defaultValue: .int(3),
                            access: .readOnly, summary: "Tech level."),
    ]

    /// The OSC contract's (v1) command table, plus `/sync`, `/status`, `/config/applicators`,
    /// `/config/max_output`, `/config/calibration`, MIDI control, the hearing test and the reports.
    static let contract = [
        "/ping", "/sync", "/list", "/status", "/source/confirm", "/subscribe", "/subscribe/confirm", "/unsubscribe", "/config/delivery", "/config/timeout",
        "/config/applicators", "/config/max_output", "/config/calibration", "/session", "/session/activate", "/session/deactivate",
        "/session/interrupt", "/session/resolve", "/profile/audiogram", "/personalization/gains", "/patch/list", "/patch/load", "/patch/save",
        "/patch/delete", "/patch/current",
        "/midi/map", "/midi/unmap", "/midi/list", "/midi/learn", "/midi/learn/cancel",
        "/test/start", "/test/heard", "/test/pause", "/test/resume", "/test/cancel", "/test/status", "/test/config",
        "/test/earphone", "/test/submit", "/test/export", "/test/import", "/test/state", "/test/result", "/test/no_response", "/test/masking_dilemma",
        "/calibration", "/calibration/tone", "/calibration/stop", "/calibration/measured", "/calibration/reset",
        "/response", "/meters/subscribe", "/meters/unsubscribe", "/meters/input", "/state", "/invalidated", "/error",
    ]

    @Test func theCatalogCoversTheContractOnce() {
        let addresses = OSCCommandDescription.all.map(\.address)
        #expect(addresses == Self.contract)  // documentation order
        for command in OSCCommandDescription.all {
            #expect(!command.summary.isEmpty && !command.reply.isEmpty && !command.examples.isEmpty, "\(command.address)")
        }
    }

    @Test func theDocumentMentionsEveryParameterAndCommand() {
        let text = OSCDocumentation.markdown(parameters: Self.parameters)
        for descriptor in Self.parameters {
            #expect(text.contains("| `\(descriptor.address)` |"), "parameter table lacks \(descriptor.address)")
            #expect(text.contains("| `\(descriptor.normalizedAddress)` |"), "fader table lacks \(descriptor.address)")
        }
        for command in OSCCommandDescription.all {
            #expect(text.contains("\n### `\(command.address)`\n"), "no section for \(command.address)")
            #expect(text.contains("| `\(command.signature.replacingOccurrences(of: "|", with: "\\|"))` |"),
                    "summary lacks \(command.address)")
        }
        for section in OSCCommandDescription.Section.allCases {
            #expect(text.contains("\n## \(section.rawValue)\n"))
        }
        #expect(text.hasPrefix("# OSC reference\n"))
        #expect(text.hasSuffix("```\n"))
        #expect(!text.contains("\n\n\n"))
        // The parameter table is the registry's, as in docs/osc-guide.md.
        #expect(text.contains(ParameterTable.markdown(Self.parameters)))
    }

    @Test func aCommandSection() throws {
        let timeout = try #require(OSCCommandDescription.all.first { $0.address == "/config/timeout" })
        #expect(OSCDocumentation.commandSection(timeout) == """
            ### `/config/timeout`

            `/config/timeout [,f seconds]`

            How long a change may take to be applied before it ends `failed` (default 10 s). Without arguments, queries.

            Arguments:

            - `seconds` (`f`, optional): the apply timeout, 0.01…600 s.

            Reply: `/config/timeout ,f seconds ,s seconds` (the unit last: a reply is never a request).

            Errors (`/error /config/timeout message`):

            - not a number within 0.01…600 s

            ```sh
            oscsend localhost 7700 /config/timeout f 2
            ```
            """)
        let audiogram = try #require(OSCCommandDescription.all.first { $0.address == "/profile/audiogram" })
        #expect(audiogram.signature == "/profile/audiogram ,s ear ,f hz ,f db_hl …")
        let load = try #require(OSCCommandDescription.all.first { $0.address == "/patch/load" })
        #expect(OSCDocumentation.commandSummary([load]) == """
            ## Command summary

            | message | reply |
            | --- | --- |
            | `/patch/load ,i\\|s patch` | `/patch/current ,i number ,s name ,i modified ,i pending` to the sender and to subscribers (again when `pending` returns to 0), plus value feedback to subscribers for every parameter the patch changed. |
            """)
    }

    @Test func theFaderTableShowsEachTaper() {
        let descriptors = [EngineSlot.filterCutoff, .filterGain, .filterQ, .filterType, .filterEnabled].map(\.descriptor)
            + [Self.sessionShaped.last!]
        #expect(OSCDocumentation.faderTable(descriptors) == """
            | fader address | taper | 0 | 0.5 | 1 |
            | --- | --- | --- | --- | --- |
            | `/filter/cutoff/normalized` | logarithmic | 20 Hz | 632.5 Hz | 20000 Hz |
            | `/filter/gain/normalized` | linear in dB | -24 dB | 0 dB | 24 dB |
            | `/filter/q/normalized` | linear | 0.1 | 9.05 | 18 |
            | `/filter/type/normalized` | index / (count − 1), nearest | lowpass | peak | allpass |
            | `/filter/enabled/normalized` | 0 / 1 (≥ 0.5 = on) | 0 | 1 | 1 |
            | `/processing/fitting/normalized` | linear, rounded | 1 | 3 | 4 |
            """)
    }

    @Test func parameterExamples() {
        let descriptors = [EngineSlot.filterEnabled, .filterType, .filterCutoff, .outputGain].map(\.descriptor)
            + [Self.sessionShaped.last!]
        #expect(OSCDocumentation.parameterExamples(descriptors) == [
            "oscsend localhost 7700 /filter/enabled i 1",
            "oscsend localhost 7700 /filter/type s highpass",
            "oscsend localhost 7700 /filter/cutoff f 1000",
            "oscsend localhost 7700 /output/gain f 0",
            "oscsend localhost 7700 /filter/enabled    # query: the reply is /filter/enabled <value>",
            "oscsend localhost 7700 /filter/cutoff/normalized f 0.5",
            "oscsend localhost 7700 /output/gain/normalized f 0.5",
        ])
    }

    @Test func numbersAreShownWithoutExponents() {
        #expect(OSCDocumentation.format(Float(20000)) == "20000")
        #expect(OSCDocumentation.format(Float(-24)) == "-24")
        #expect(OSCDocumentation.format(Float(632.4555)) == "632.5")
        #expect(OSCDocumentation.format(Float(0.7071)) == "0.7071")
        #expect(OSCDocumentation.format(Float(24.494897)) == "24.49")
        #expect(OSCDocumentation.format(Float(9.05)) == "9.05")
    }

    /// Every `oscsend` example of a command sends types its argument list accepts, and one value
    /// per type.
    @Test(arguments: OSCCommandDescription.all.filter { $0.section != .reports }.map(\.address))
    func examplesMatchTheArguments(_ address: String) throws {
        let command = try #require(OSCCommandDescription.all.first { $0.address == address })
        let sends = command.examples.compactMap { line -> [Substring]? in
            let words = line.split(separator: "#")[0].split(separator: " ")
            guard words.starts(with: ["oscsend", "localhost", "7700"]) else { return nil }
            return Array(words.dropFirst(3))
        }
        #expect(!sends.isEmpty)
        for words in sends {
            #expect(words[0] == command.address)
            let types = words.count > 1 ? Array(words[1]) : []
            #expect(words.count == (types.isEmpty ? 1 : 2 + types.count), "\(words)")
            #expect(accepts(command.arguments, types), "\(command.address) does not take ,\(String(types))")
        }
    }

    private func accepts(_ arguments: [OSCCommandDescription.Argument], _ types: [Character]) -> Bool {
        let fixed = arguments.prefix { !$0.repeats }
        let group = arguments.drop { !$0.repeats }
        let required = fixed.filter { !$0.isOptional }.count
        guard types.count >= required else { return false }
        for (index, type) in types.enumerated() {
            let argument: OSCCommandDescription.Argument
            if index < fixed.count {
                argument = fixed[fixed.startIndex + index]
            } else {
                guard !group.isEmpty else { return false }
                argument = group[group.startIndex + (index - fixed.count) % group.count]
            }
            guard argument.type.split(separator: "|").contains(Substring(String(type))) else { return false }
        }
        return group.isEmpty || (types.count - fixed.count) % group.count == 0
    }
}
