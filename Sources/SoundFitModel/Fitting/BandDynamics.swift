/// One band's prescription and dynamics: what a personalization preset prescribes for a band and
/// what the multiband processor applies (the preset payload's bands are these, in these units).
///
/// Levels are band levels in dB SPL (see `PresetPayload.calibration`), gains in dB. The static
/// gain law (`gain(atLevel:)`) at band level `L`:
///
/// - compression: `gain + (1/ratio − 1)·(max(L, knee) − referenceLevel)`: the prescribed gain at
///   the reference level, falling with slope `1/ratio − 1` above the knee, constant below it;
/// - expansion (when `expansionKnee` is set): below the expansion knee the gain falls by
///   `(expansionRatio − 1)` dB per dB (ratio 2: 1 dB per dB, so the output falls 2 dB per dB);
///   an expansion knee above `knee` acts at `knee`;
/// - floored at `minimumGain` (0 dB unless the user asks for less): after compression and
///   expansion, so that neither ever makes the insertion gain a loss (NAL-R never prescribes
///   one; openMHA's fitting clamps at 0 dB too). Expansion therefore only takes back gain
///   down to the floor: with the default floor it quiets the amplified noise, never the sound;
/// - capped at `maximumGain` (a safety cap, `maximumGain ≥ 0 ≥ minimumGain`, so the order of
///   floor and cap does not matter);
/// - per-band limiter: the band output level `L + gain` never exceeds `outputLimit` — last,
///   because it is safety: above the limit it wins over the floor (the gain may then be a loss).
///
/// The valid range of each field is in `Field.range`.
public struct BandDynamics: Sendable, Equatable {
    /// Band centre (Hz); must match the layout within 0.5 Hz.
    public var centre: Double
    /// Insertion gain (dB) at `referenceLevel`.
    public var gain: Double
    /// The band level (dB SPL) at which `gain` applies.
    public var referenceLevel: Double
    /// Compression ratio above `knee` (1 = linear).
    public var ratio: Double
    /// Compression knee (dB SPL).
    public var knee: Double
    /// Expansion knee (dB SPL); nil = no expansion.
    public var expansionKnee: Double?
    /// Expansion ratio below `expansionKnee`.
    public var expansionRatio: Double
    /// Gain cap (dB): the largest gain at any level.
    public var maximumGain: Double
    /// Gain floor (dB): the smallest gain at any level the limiter leaves alone (default 0:
    /// never a loss). Negative only when the user asks for expansion or compression below unity.
    public var minimumGain: Double
    /// Band output limit (dB SPL): a per-band limiter.
    public var outputLimit: Double
    /// Level detector attack and release time constants (ms).
    public var attack: Double
    public var release: Double

    public init(centre: Double, gain: Double, referenceLevel: Double = 60, ratio: Double = 1, knee: Double = 35,
                expansionKnee: Double? = nil, expansionRatio: Double = 1, maximumGain: Double = 60,
                outputLimit: Double = 140, attack: Double = 5, release: Double = 50, minimumGain: Double = 0) {
        self.centre = centre
        self.gain = gain
        self.referenceLevel = referenceLevel
        self.ratio = ratio
        self.knee = knee
        self.expansionKnee = expansionKnee
        self.expansionRatio = expansionRatio
        self.maximumGain = maximumGain
        self.outputLimit = outputLimit
        self.attack = attack
        self.release = release
        self.minimumGain = minimumGain
    }

    /// The static gain law (dB) at band level `level` (dB SPL), as documented on the type.
    public func gain(atLevel level: Double) -> Double {
        let slope = 1 / ratio - 1
        var g = gain + slope * (max(level, knee) - referenceLevel)
        if let expansionKnee {
            g -= (expansionRatio - 1) * max(min(expansionKnee, knee) - level, 0)
        }
        g = max(g, minimumGain)
        g = min(g, maximumGain)
        return min(g, outputLimit - level)
    }
}

extension BandDynamics {
    /// A band's numeric fields, named as preset files spell them (with their unit), with the one
    /// table of the ranges a processor accepts (`range`), checked by `PresetPayload.validateBands()`
    /// when a preset is validated.
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
