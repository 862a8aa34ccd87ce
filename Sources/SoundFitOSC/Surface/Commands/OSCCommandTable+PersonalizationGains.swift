import OSCCore
import SoundFitModel
import SoundFitRuntime

/// `/personalization/gains`: the prescribed and the applied gain per ear and band.
extension OSCCommandTable {
    static let personalizationGains = OSCCommand(
        OSCCommandDescription(
            "/personalization/gains", section: .profile,
            summary: "The share of the prescription applied now, for 65 dB SPL speech: per ear and band, the "
                + "prescribed gain (NAL-RP, g65 of the current profile's default preset) and the gain applied now "
                + "(the loaded preset's g65 through the intensity, `20·log10(1 + i·(10^(g/20) − 1))`; 0 dB while "
                + "the personalization is off: disabled, no preset or no session). Both are the presets' gain laws, "
                + "not a measurement. Without a session, for the configured tech level.",
            reply: "`/personalization/gains ,s variant|none ,f intensity ,i applied ,f applied_share_db "
                + ",i gain_capped_bands` (applied: 1 while the personalization acts; applied_share_db: mean applied "
                + "minus mean prescribed gain over every band of both ears, 0 = the whole prescription; "
                + "gain_capped_bands: bands of the loaded preset whose safety cap binds), then "
                + "`/personalization/gains/left ,f hz ,f prescribed_db ,f applied_db … ,s dB` and the same for "
                + "`/personalization/gains/right`, each ending in its unit.",
            errors: ["no hearing profile yet"],
            examples: ["oscsend localhost 7700 /personalization/gains"]),
        requests: [.bare("/personalization/gains")],
        replies: [OSCMessageForm("/personalization/gains", .atLeast(1)),
                  OSCMessageForm("/personalization/gains/left", .any),
                  OSCMessageForm("/personalization/gains/right", .any)],
        prepare: { request in
            // With arguments the message has the reply's form and never gets here (replies are
            // never answered). The answer is large (up to ~400 bytes at tech level 4): refused
            // to an unconfirmed source on an exposed port, as `/status` is.
            if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
            let runtime = request.surface.runtime
            return .perform {
                do throws(ControlError) {
                    let gains = try runtime.personalizationGains()
                    for message in personalizationGainsMessages(gains) { request.reply(message) }
                } catch {
                    request.reject(error.message)
                }
            }
        })

    /// The answer to `/personalization/gains`: summary, left, right.
    static func personalizationGainsMessages(_ gains: PersonalizationGains) -> [OSCMessage] {
        func bands(_ ear: PersonalizationGains.Ear) -> [OSCArgument] {
            ear.centres.indices.flatMap { index -> [OSCArgument] in
                [.float(Float(ear.centres[index])), .float(Float(ear.prescribed[index])), .float(Float(ear.applied[index]))]
            } + [.string(levelUnit)]
        }
        return [
            OSCMessage("/personalization/gains", [
                .string(gains.variant?.rawValue ?? "none"), .float(Float(gains.intensity)), .int32(gains.isApplied ? 1 : 0),
                .float(Float(gains.appliedShare)), .int32(Int32(gains.cappedBandCount)),
            ]),
            OSCMessage("/personalization/gains/left", bands(gains.left)),
            OSCMessage("/personalization/gains/right", bands(gains.right)),
        ]
    }
}

extension OSCControlSurface {
    /// `/status`'s personalization fields: `applied_share_db` (see `/personalization/gains`) and
    /// `gain_capped_bands`; none without a hearing profile.
    func personalizationStatusArguments() -> [OSCArgument] {
        guard let gains = try? runtime.personalizationGains() else { return [] }
        return [.string("applied_share_db"), .float(Float(gains.appliedShare)),
                .string("gain_capped_bands"), .int32(Int32(gains.cappedBandCount))]
    }
}
