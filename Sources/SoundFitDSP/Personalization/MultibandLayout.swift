import SoundFitModel

/// The band layout of a tech level: its band centres (`TechLevel.bandCentres`, the one
/// tech-level table).
///
/// A band reaches from the geometric mean with its lower neighbour to the one with its upper
/// neighbour (the outer bands mirror their inner spacing): the analysis band-pass and the peaking
/// filter of `EqualizerDesign` take their bandwidths from that.
public struct MultibandLayout: Sendable, Equatable {
    public let techLevel: Int
    public let bandCentres: [Double]

    public static var techLevels: ClosedRange<Int> { TechLevel.range }
    /// The largest band count of any tech level.
    public static var maximumBandCount: Int { TechLevel.maximumBandCount }

    /// The layout of `techLevel` (1…4), or nil.
    public init?(techLevel: Int) {
        guard let level = try? TechLevel(techLevel) else { return nil }
        self.techLevel = techLevel
        bandCentres = level.bandCentres
    }

    public var bandCount: Int { bandCentres.count }
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
