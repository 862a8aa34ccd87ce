import SoundFitModel

extension Fitting {
    /// `try Fitting.techLevel(4)`, throwing
    /// `ProcessingError.invalidTechLevel` outside `techLevels`.
    public static func techLevel(_ techLevel: Int) throws(ProcessingError) -> Fitting {
        do throws(FittingError) {
            return try Fitting(techLevel: techLevel)
        } catch {
            throw .invalidTechLevel(techLevel)
        }
    }
}

/// What a session is activated with: the personalization mode and the fitting.
public struct ProcessingConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// How presets are offered.
    public enum Personalization: Sendable, Hashable {
        /// Up to three presets from the hearing profile: `default`, `up` and `down` (the
        /// recommended mode). `up`/`down` may be unavailable for some profiles.
        case fineTuning(fitting: Fitting)
        /// One preset, the `default` variant.
        case singlePreset(fitting: Fitting)

        /// The processor's fitting.
        public var fitting: Fitting {
            switch self {
            case .fineTuning(let fitting), .singlePreset(let fitting): fitting
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

    /// The personalization mode and its fitting.
    public var personalization: Personalization

    /// A configuration.
    public init(personalization: Personalization) {
        self.personalization = personalization
    }

    /// FineTuning personalization (default/up/down presets) for `fitting`.
    public static func fineTuning(fitting: Fitting) -> ProcessingConfiguration {
        ProcessingConfiguration(personalization: .fineTuning(fitting: fitting))
    }

    /// SinglePreset personalization for `fitting`.
    public static func singlePreset(fitting: Fitting) -> ProcessingConfiguration {
        ProcessingConfiguration(personalization: .singlePreset(fitting: fitting))
    }

    /// The processor's fitting.
    public var fitting: Fitting { personalization.fitting }

    /// `fine_tuning, tech level 3`.
    public var description: String { "\(personalization.modeName), \(fitting)" }
}
