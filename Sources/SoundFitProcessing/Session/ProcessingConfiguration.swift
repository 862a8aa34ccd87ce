import SoundFitModel

/// What a session is activated with: the personalization mode and the tech level.
public struct ProcessingConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// How presets are offered.
    public enum Personalization: Sendable, Hashable {
        /// Up to three presets from the hearing profile: `default`, `up` and `down` (the
        /// recommended mode). `up`/`down` may be unavailable for some profiles.
        case fineTuning(techLevel: TechLevel)
        /// One preset, the `default` variant.
        case singlePreset(techLevel: TechLevel)

        /// The processor's tech level.
        public var techLevel: TechLevel {
            switch self {
            case .fineTuning(let techLevel), .singlePreset(let techLevel): techLevel
            }
        }

        /// The preset variants the mode can offer.
        public var variants: [PresetVariant] {
            switch self {
            case .fineTuning: [.default, .up, .down]
            case .singlePreset: [.default]
            }
        }

        /// `fine_tuning` or `single_preset`, as files and surfaces spell the mode.
        public var modeName: String {
            switch self {
            case .fineTuning: "fine_tuning"
            case .singlePreset: "single_preset"
            }
        }
    }

    /// The personalization mode and its tech level.
    public var personalization: Personalization

    /// A configuration.
    public init(personalization: Personalization) {
        self.personalization = personalization
    }

    /// FineTuning personalization (default/up/down presets) for `techLevel`.
    public static func fineTuning(techLevel: TechLevel) -> ProcessingConfiguration {
        ProcessingConfiguration(personalization: .fineTuning(techLevel: techLevel))
    }

    /// SinglePreset personalization for `techLevel`.
    public static func singlePreset(techLevel: TechLevel) -> ProcessingConfiguration {
        ProcessingConfiguration(personalization: .singlePreset(techLevel: techLevel))
    }

    /// The processor's tech level.
    public var techLevel: TechLevel { personalization.techLevel }

    /// `fine_tuning, tech level 3`.
    public var description: String { "\(personalization.modeName), \(techLevel)" }
}
