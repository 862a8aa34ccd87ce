extension BandDynamics {
    /// A band's numeric fields, named as preset files spell them (with their unit), with the one
    /// table of the ranges a processor accepts (`range`), checked by `MultibandPreset.validate`
    /// and by the preset payload's validation alike.
    public enum Field: String, Sendable, CaseIterable {
        case centre = "centre_hz"
        case gain = "gain_db"
        case referenceLevel = "reference_level_db_spl"
        case ratio
        case knee = "knee_db_spl"
        case expansionKnee = "expansion_knee_db_spl"
        case expansionRatio = "expansion_ratio"
        case maximumGain = "maximum_gain_db"
        case minimumGain = "minimum_gain_db"
        case outputLimit = "output_limit_db_spl"
        case attack = "attack_ms"
        case release = "release_ms"

        /// The values a processor accepts; nil for `centre`, which must match the layout.
        public var range: ClosedRange<Double>? {
            switch self {
            case .centre: nil
            case .gain, .maximumGain: 0...60
            case .minimumGain: -60...0
            case .referenceLevel, .knee, .expansionKnee: 0...120
            case .ratio: 1...5
            case .expansionRatio: 1...4
            case .outputLimit: 60...140
            case .attack: 0.5...200
            case .release: 5...2000
            }
        }

        /// Whether the field may be absent (nil): only `expansionKnee` (no expansion).
        public var isOptional: Bool { self == .expansionKnee }

        /// Whether a preset file must carry the field: all but `expansionKnee` (absent: no
        /// expansion) and `minimumGain` (absent: 0 dB, what files written before it had).
        public var isRequired: Bool { !isOptional && self != .minimumGain }
    }

    /// The value of `field` (nil only for an absent `expansionKnee`). Setting nil on a field
    /// that is not optional leaves it unchanged.
    public subscript(field: Field) -> Double? {
        get {
            switch field {
            case .centre: centre
            case .gain: gain
            case .referenceLevel: referenceLevel
            case .ratio: ratio
            case .knee: knee
            case .expansionKnee: expansionKnee
            case .expansionRatio: expansionRatio
            case .maximumGain: maximumGain
            case .minimumGain: minimumGain
            case .outputLimit: outputLimit
            case .attack: attack
            case .release: release
            }
        }
        set {
            if field == .expansionKnee {
                expansionKnee = newValue
                return
            }
            guard let newValue else { return }
            switch field {
            case .centre: centre = newValue
            case .gain: gain = newValue
            case .referenceLevel: referenceLevel = newValue
            case .ratio: ratio = newValue
            case .knee: knee = newValue
            case .expansionKnee: break
            case .expansionRatio: expansionRatio = newValue
            case .maximumGain: maximumGain = newValue
            case .minimumGain: minimumGain = newValue
            case .outputLimit: outputLimit = newValue
            case .attack: attack = newValue
            case .release: release = newValue
            }
        }
    }
}
