import SoundFitHearing

/// `/profile/audiogram`.
extension OSCCommandTable {
    static let profile = [audiogram]

    static let audiogram = OSCCommand(
        OSCCommandDescription(
            "/profile/audiogram", section: .profile,
            summary: "Sets the listener's hearing thresholds and generates the personalization presets for the "
                + "session's tech level; the recommendation follows (default preset, processing enabled): at once, "
                + "or, without an active session, when the next one starts.",
            arguments: [
                Arg("s", "ear", "`left`, `right` or `both`."),
                Arg("f", "hz", "a standard audiometric frequency (125 … 8000 Hz); 500, 1000, 2000 and 4000 are required.",
                    repeats: true),
                Arg("f", "db_hl", "the threshold at that frequency, −10 … 120 dB HL.", repeats: true),
            ],
            reply: "`/profile/presets ,s variant …`: the preset variants now available.",
            errors: [
                "unknown ear",
                "frequencies and levels not in pairs",
                "a nonstandard or repeated frequency, a required one missing, or a level out of range",
            ],
            examples: ["oscsend localhost 7700 /profile/audiogram sffffffff both 500 20 1000 25 2000 40 4000 55"]),
        requests: [OSCMessageForm("/profile/audiogram", .any)],
        replies: [OSCMessageForm("/profile/presets", .any)],
        prepare: prepareAudiogram)

    /// `/profile/audiogram ,s left|right|both ,f hz ,f db_hl …` → `/profile/presets ,s variant …`.
    /// The new audiogram replaces that ear's (both: both ears'); the other ear keeps its own.
    private static func prepareAudiogram(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let arguments = request.arguments
        guard let first = arguments.first, case .string(let ear) = first, ["left", "right", "both"].contains(ear) else {
            return .reject("expects ,s left|right|both then hz, dB HL pairs")
        }
        let numbers = arguments.dropFirst().map(\.numericValue)
        guard !numbers.isEmpty, numbers.count % 2 == 0, numbers.allSatisfy({ $0 != nil }) else {
            return .reject("expects pairs of numbers (hz, dB HL) after the ear, got \(request.message.typeTags)")
        }
        let values = numbers.map { $0! }
        let surface = request.surface
        let audiogram: Audiogram
        do {
            audiogram = try Audiogram(stride(from: 0, to: values.count, by: 2).map { (values[$0], values[$0 + 1]) })
        } catch {
            return .reject(error.description)
        }
        return .perform {
            // The other ear's audiogram as it is when performed (an earlier element of the same
            // bundle may have replaced it).
            let current = surface.runtime.presets.profile
            let profile = Result { try HearingProfile(left: ear == "right" ? current?.left : audiogram,
                                                      right: ear == "left" ? current?.right : audiogram) }
            request.answerLater {
                let variants = try await surface.runtime.submitProfile(profile.get())
                surface.stateKeeper?.persist()
                request.reply(OSCMessage("/profile/presets", variants.map { .string($0.rawValue) }))
            }
        }
    }
}
