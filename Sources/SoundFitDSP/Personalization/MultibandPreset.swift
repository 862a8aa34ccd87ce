/// The band layout of a tech level: its band centres. The one tech-level table: the hearing
/// module's `TechLevel.bandCentres` reads it.
///
/// | tech level | bands | centres (Hz) |
/// | --- | --- | --- |
/// | 1 | 4 | 500, 1k, 2k, 4k |
/// | 2 | 6 | octaves 250…8k |
/// | 3 | 8 | 250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k |
/// | 4 | 12 | half octaves from 250 (250·2^(k/2)) |
///
/// A band reaches from the geometric mean with its lower neighbour to the one with its upper
/// neighbour (the outer bands mirror their inner spacing): the analysis band-pass and the peaking
/// filter of `EqualizerDesign` take their bandwidths from that.
public struct MultibandLayout: Sendable, Equatable {
    public let techLevel: Int
    public let bandCentres: [Double]

    public static var techLevels: ClosedRange<Int> { 1...4 }
    /// The largest band count of any tech level.
    public static var maximumBandCount: Int { 12 }

    /// The layout of `techLevel` (1…4), or nil.
    public init?(techLevel: Int) {
        guard Self.techLevels.contains(techLevel) else { return nil }
        self.techLevel = techLevel
        switch techLevel {
        case 1: bandCentres = [500, 1000, 2000, 4000]
        case 2: bandCentres = [250, 500, 1000, 2000, 4000, 8000]
        case 3: bandCentres = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
        default: bandCentres = (0..<12).map { 250 * libmPow(2, Double($0) / 2) }
        }
    }

    public var bandCount: Int { bandCentres.count }
}

/// One band's prescription and dynamics: what a personalization preset prescribes for a band and
/// what the multiband processor applies (the preset payload's bands are these, in these units).
///
/// Levels are band levels in dB SPL (see `MultibandPreset.calibration`), gains in dB. The static
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

/// The DSP-side description of a personalization preset: what the multiband processor applies.
/// (The control side converts its payload into this; SoundFitDSP knows nothing of audiograms.)
public struct MultibandPreset: Sendable, Equatable {
    public var techLevel: Int
    /// dB SPL of a full-scale sine (a sine of amplitude 1, RMS 1/√2), `80...130`; default 100.
    public var calibration: Double
    /// Per-ear bands, in layout order (`MultibandLayout(techLevel:).bandCentres`).
    public var left: [BandDynamics]
    public var right: [BandDynamics]

    public static var defaultCalibration: Double { 100 }
    public static var calibrationRange: ClosedRange<Double> { 80...130 }

    public init(techLevel: Int, calibration: Double = MultibandPreset.defaultCalibration,
                left: [BandDynamics], right: [BandDynamics]) {
        self.techLevel = techLevel
        self.calibration = calibration
        self.left = left
        self.right = right
    }

    /// A preset with the same bands for both ears.
    public init(techLevel: Int, calibration: Double = MultibandPreset.defaultCalibration, bands: [BandDynamics]) {
        self.init(techLevel: techLevel, calibration: calibration, left: bands, right: bands)
    }

    /// Checks tech level, band count and centres, and that every number is finite and in range.
    /// The error names the field at fault.
    public func validate() throws(MultibandPresetError) {
        guard let layout = MultibandLayout(techLevel: techLevel) else {
            throw MultibandPresetError("techLevel: \(techLevel) is not 1…4")
        }
        guard calibration.isFinite, Self.calibrationRange.contains(calibration) else {
            throw MultibandPresetError("calibration: \(calibration) is not in 80…130 dB SPL")
        }
        for (ear, bands) in [("left", left), ("right", right)] {
            guard bands.count == layout.bandCount else {
                throw MultibandPresetError("\(ear): \(bands.count) bands, tech level \(techLevel) has \(layout.bandCount)")
            }
            for (index, band) in bands.enumerated() {
                guard band.centre.isFinite, abs(band.centre - layout.bandCentres[index]) < 0.5 else {
                    throw MultibandPresetError("\(ear)[\(index)].centre_hz: \(band.centre) Hz is not band \(index + 1) of tech level \(techLevel) (\(layout.bandCentres[index]) Hz)")
                }
                for field in BandDynamics.Field.allCases {
                    guard let range = field.range, let value = band[field] else { continue }
                    guard value.isFinite, range.contains(value) else {
                        throw MultibandPresetError("\(ear)[\(index)].\(field.rawValue): \(value) is not in \(range.lowerBound)…\(range.upperBound)")
                    }
                }
            }
        }
    }
}

/// A preset was rejected; nothing was changed.
public struct MultibandPresetError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension MultibandLayout {
    /// The power response |H(f)|² of band `band`'s analysis band-pass (the filter its level
    /// detector reads, unity at the band centre), designed for `sampleRate` (48 kHz by default:
    /// presets are sample-rate independent, and the response below 16 kHz hardly differs between
    /// 44.1, 48 and 96 kHz). What a band reads of a signal is ∫ density · |H|² df; the preset
    /// generator computes its reference levels with it. Allocates; call off the audio thread.
    public func analysisPowerResponse(band: Int, sampleRate: Double = 48000) -> @Sendable (Double) -> Double {
        let design = EqualizerDesign(layout: self, sampleRate: sampleRate)
        let centre = design.bellCentres[band], q = design.analysisQ[band]
        let warp = libmTan(Double.pi * centre / sampleRate)
        return { frequency in
            guard frequency > 0, frequency < 0.5 * sampleRate else { return 0 }
            let x = libmTan(Double.pi * frequency / sampleRate) / warp
            let y = q * (x - 1 / x)
            return 1 / (1 + y * y)
        }
    }
}
