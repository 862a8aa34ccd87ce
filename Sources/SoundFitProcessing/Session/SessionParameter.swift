import SoundFitModel

/// The session's parameters (`SessionParameter.Name`, in SoundFitModel) as a `ProcessingHandler`
/// sees them: which ones it is written, which ones it is read, and the values that travel.
///
/// A write's or read's result is the handler's `async throws` result.
extension SessionParameter {
    /// A value the controller writes to the handler.
    public enum Writable: Sendable, Equatable, CustomStringConvertible {
        /// Whether processing is enabled.
        case isEnabled(Bool)
        /// How much processing to apply, 0…1.
        case intensity(Float)
        /// The personalization preset to apply (nil: none).
        case preset(PersonalizationPreset?)

        /// Which parameter the value is for.
        public var name: Name {
            switch self {
            case .isEnabled: .isEnabled
            case .intensity: .intensity
            case .preset: .preset
            }
        }

        /// `intensity(0.5)`, `preset(<id>)`.
        public var description: String {
            switch self {
            case .isEnabled(let value): "isEnabled(\(value))"
            case .intensity(let value): "intensity(\(value))"
            case .preset(let value): "preset(\(value.map(\.id) ?? "nil"))"
            }
        }
    }

    /// A parameter the controller reads from the handler (which keeps and caches its state).
    public enum Readable: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Whether processing is enabled.
        case isEnabled
        /// Whether enabling should be attempted (SoundFit: a preset is applied).
        case canEnable
        /// How much processing is applied.
        case intensity
        /// The processor's tech level (`/processing/fitting`).
        case techLevel

        /// The session parameter this reading is about.
        public var name: Name {
            switch self {
            case .isEnabled: .isEnabled
            case .canEnable: .canEnable
            case .intensity: .intensity
            case .techLevel: .techLevel
            }
        }

        /// The writable parameter whose re-applying restores the handler when this reading
        /// disagrees with the session or fails (`canEnable` follows the preset); nil for the
        /// tech level, which is reported, not fixed.
        public var restoredBy: SessionParameter.Name? {
            switch self {
            case .isEnabled: .isEnabled
            case .canEnable: .preset
            case .intensity: .intensity
            case .techLevel: nil
            }
        }

        /// The raw name.
        public var description: String { rawValue }
    }

    /// A value the handler answers a read with.
    public enum ReadValue: Sendable, Equatable, CustomStringConvertible {
        /// Whether processing is enabled.
        case isEnabled(Bool)
        /// Whether enabling should be attempted.
        case canEnable(Bool)
        /// How much processing is applied.
        case intensity(Float)
        /// The processor's tech level (`/processing/fitting`).
        case techLevel(TechLevel)

        /// Which readable parameter the value is for.
        public var parameter: Readable {
            switch self {
            case .isEnabled: .isEnabled
            case .canEnable: .canEnable
            case .intensity: .intensity
            case .techLevel: .techLevel
            }
        }

        /// `canEnable(true)`, `techLevel(3)`.
        public var description: String {
            switch self {
            case .isEnabled(let value): "isEnabled(\(value))"
            case .canEnable(let value): "canEnable(\(value))"
            case .intensity(let value): "intensity(\(value))"
            case .techLevel(let level): "techLevel(\(level.value))"
            }
        }
    }
}
