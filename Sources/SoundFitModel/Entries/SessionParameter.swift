/// The processing session's parameters (seed 001), declared in one place: each one's entry in
/// the parameter model, its name for every layer, and the values it travels as between the
/// session and its handler (`ProcessingHandler.set` and `get`: the seed's writable and readable
/// parameters, typed per parameter).
///
/// Adding a session parameter: its entry below (and in `ParameterModel.session`), its `Name`, and
/// its cases in `Writable`, `Readable` and `ReadValue` as it is written and read; then the
/// session's typed parameter (`ProcessingSession`) and how the engine applies and reads it
/// (`EngineProcessingHandler`). Its surface control follows from its entry (`SessionControl`:
/// a bool or a number is requested like any value; the preset, the enable's refusal and
/// `can_enable` are the exceptions named there). The compiler lists each switch that misses it.
extension ParameterModel {
    public static let processingEnabled = ParameterDescriptor(
        address: "/processing/enabled", kind: .bool, defaultValue: .bool(false),
        summary: "Hearing personalization on/off. Fails while the session is interrupted.",
        displayName: "Personalization", binding: .session(.isEnabled))
    public static let processingIntensity = ParameterDescriptor(
        address: "/processing/intensity", kind: .float(0...1), defaultValue: .float(0.5),
        summary: "How much personalization is applied: 0 = transparent, 1 = the full preset.",
        displayName: "Personalization intensity", binding: .session(.intensity))
    public static let processingPreset = ParameterDescriptor(
        address: "/processing/preset", kind: .choice(PresetVariant.allCases.map(\.rawValue) + [PresetVariant.noneName]),
        defaultValue: .choice(PresetVariant.noneName),
        summary: "Personalization preset variant generated from the hearing profile (those available); none = no preset.",
        displayName: "Personalization preset", binding: .session(.preset))
    public static let processingCanEnable = ParameterDescriptor(
        address: "/processing/can_enable", kind: .bool, defaultValue: .bool(false), access: .readOnly,
        summary: "True when a preset is applied.",
        displayName: "Can enable", binding: .session(.canEnable))
    public static let processingFitting = ParameterDescriptor(
        address: "/processing/fitting", kind: .int(TechLevel.range), defaultValue: .int(3), access: .readOnly,
        summary: "Tech level of the active session.",
        displayName: "Tech level", binding: .session(.techLevel))

    /// The processing session's entries, in `SessionParameter.Name` order.
    public static let session: [ParameterDescriptor] = [
        processingEnabled, processingIntensity, processingPreset, processingCanEnable, processingFitting,
    ]
}

/// The processing session's parameters: their names, and the values that travel to and from
/// the session's handler.
public enum SessionParameter {
    /// A session parameter; its entry in the parameter model is `ParameterModel.entry(for:)`. The
    /// cases are in the order of `ParameterModel.session` (address-space order; a model test
    /// checks it).
    public enum Name: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Personalization on/off, `/processing/enabled`. Writable and readable.
        case isEnabled
        /// How much personalization is applied, `/processing/intensity`. Writable and readable.
        case intensity
        /// The personalization preset variant applied, `/processing/preset`. Writable only (read
        /// `canEnable` to check it).
        case preset
        /// Whether enabling can succeed, `/processing/can_enable`. Readable only.
        case canEnable
        /// The session's tech level, `/processing/fitting`. Readable only.
        case techLevel

        /// The writable ones in the order that keeps the session consistent while several
        /// change (restoring, re-applying, loading a patch): the preset first, then the
        /// intensity, the enable last (it is refused without a preset).
        public static let applicationOrder: [Name] = [.preset, .intensity, .isEnabled]

        /// Whether surfaces and the session write it (its entry is read-write).
        public var isWritable: Bool { ParameterModel.entry(for: self).access == .readWrite }

        public var description: String { rawValue }
    }

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

        /// The reading of the session parameter `name` (nil: the handler is not read for it).
        public init?(_ name: Name) { self.init(rawValue: name.rawValue) }

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

        /// The value as the parameter's entry states it (`/processing/fitting` is the tech
        /// level's number).
        public var parameterValue: ParameterValue {
            switch self {
            case .isEnabled(let value), .canEnable(let value): .bool(value)
            case .intensity(let value): .float(value)
            case .techLevel(let level): .int(level.value)
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
