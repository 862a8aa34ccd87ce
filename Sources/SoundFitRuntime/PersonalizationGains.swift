import SoundFitDSP
import SoundFitHearing
import SoundFitModel
import SoundFitProcessing

/// What the prescription asks for and what the personalization applies now, per ear and band,
/// for 65 dB SPL speech: the share of the prescription the listener gets (so that intensity
/// says what it does). `/personalization/gains` and `/status` (`applied_share_db`) report it;
/// the page draws the two curves.
///
/// - prescribed: g65 of the current profile's default variant (its `gain`: the gain at the
///   band's reference level, the band level of 65 dB SPL speech), whatever is loaded;
/// - applied: the loaded preset's (default, up or down) gain law at its reference level —
///   after its safety cap, floor and output limit — through the intensity
///   (`Intensity.appliedGain`); 0 dB in every band when the personalization is off
///   (disabled, no preset, or no active session).
///
/// Both are the preset's static law, not a measurement (`soundfit verify` measures).
public struct PersonalizationGains: Sendable, Equatable {
    /// One ear's bands, in the tech level's band order.
    public struct Ear: Sendable, Equatable {
        /// Band centres (Hz).
        public var centres: [Double]
        /// NAL-RP's gain (dB) at 65 dB SPL speech, from the default variant.
        public var prescribed: [Double]
        /// The gain (dB) applied now at 65 dB SPL speech.
        public var applied: [Double]
        /// Whether the loaded preset's safety cap binds in the band (`BandDynamics.isGainCapped`);
        /// all false when nothing is loaded.
        public var capped: [Bool]

        public init(centres: [Double], prescribed: [Double], applied: [Double], capped: [Bool]) {
            self.centres = centres
            self.prescribed = prescribed
            self.applied = applied
            self.capped = capped
        }
    }

    /// The tech level the gains are for: the session's, or the configured one without a session.
    public var techLevel: TechLevel
    /// The loaded variant, nil when no preset is loaded.
    public var variant: PresetVariant?
    /// The session's intensity (0…1), 0 without a session.
    public var intensity: Double
    /// Whether the personalization acts now (an active session, enabled, with a preset).
    public var isApplied: Bool
    public var left: Ear
    public var right: Ear

    public init(techLevel: TechLevel, variant: PresetVariant?, intensity: Double, isApplied: Bool, left: Ear, right: Ear) {
        self.techLevel = techLevel
        self.variant = variant
        self.intensity = intensity
        self.isApplied = isApplied
        self.left = left
        self.right = right
    }

    /// The mean applied gain minus the mean prescribed gain (dB) over every band of both ears:
    /// 0 when the full prescription is applied, negative when less is (intensity below 1, the
    /// down variant, personalization off).
    public var appliedShare: Double {
        let applied = left.applied + right.applied, prescribed = left.prescribed + right.prescribed
        guard !applied.isEmpty else { return 0 }
        return (applied.reduce(0, +) - prescribed.reduce(0, +)) / Double(applied.count)
    }

    /// How many bands (both ears) of the loaded preset have a binding safety cap.
    public var cappedBandCount: Int { (left.capped + right.capped).filter { $0 }.count }
}

extension SoundFitRuntime {
    /// The prescribed and applied gains now (see `PersonalizationGains`). Any thread but the
    /// audio thread; reads the session's parameter values and generates the default preset
    /// (microseconds). Throws `ControlError` without a hearing profile.
    public func personalizationGains() throws(ControlError) -> PersonalizationGains {
        let session = controller.session.flatMap { $0.isActive ? $0 : nil }
        let techLevel = session?.techLevel ?? sessionConfiguration.techLevel
        let prescription: PresetPayload
        do {
            prescription = try presets.payload(.default, for: techLevel)
        } catch let error as ControlError {
            throw error
        } catch {
            throw ControlError("\(error)")
        }
        let loaded = session?.preset.value
        let payload = loaded?.payload
        let intensity = Double(session?.intensity.value ?? 0)
        let isApplied = session?.isEnabled.value == true && payload != nil
        func ear(_ prescribed: [BandDynamics], _ applied: [BandDynamics]?) -> PersonalizationGains.Ear {
            let appliedGains = prescribed.indices.map { index -> Double in
                guard isApplied, let applied, index < applied.count else { return 0 }
                let band = applied[index]
                return Intensity.appliedGain(band.gain(atLevel: band.referenceLevel), intensity: intensity)
            }
            return PersonalizationGains.Ear(
                centres: prescribed.map(\.centre), prescribed: prescribed.map(\.gain), applied: appliedGains,
                capped: prescribed.indices.map { index in applied.map { index < $0.count && $0[index].isGainCapped } ?? false })
        }
        return PersonalizationGains(
            techLevel: techLevel, variant: loaded?.variant, intensity: intensity, isApplied: isApplied,
            left: ear(prescription.left, payload?.left), right: ear(prescription.right, payload?.right))
    }
}
