/// What a processor can do at a tech level, and the one table of its bands:
///
/// | tech level | bands | centres (Hz) | processing |
/// | --- | --- | --- | --- |
/// | 1 | 4 | 500, 1k, 2k, 4k | static EQ only |
/// | 2 | 6 | octaves 250…8k | EQ + compression |
/// | 3 | 8 | 250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k | compression + expansion + per-band limiter |
/// | 4 | 12 | half octaves from 250 (250·2^(k/2)) | as 3, per-band attack/release |
///
/// A preset is generated for exactly these bands, and the processor's filters
/// (`MultibandLayout` in SoundFitDSP) are designed around them.
extension TechLevel {
    /// The largest band count of any tech level.
    public static var maximumBandCount: Int { 12 }

    /// Band centre frequencies in Hz, from low to high.
    public var bandCentres: [Double] {
        switch value {
        case 1: [500, 1000, 2000, 4000]
        case 2: [250, 500, 1000, 2000, 4000, 8000]
        case 3: [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
        default: (0..<Self.maximumBandCount).map(Self.halfOctaveCentre)
        }
    }

    /// 250·2^(k/2) Hz: a power of two times √2 for odd k (the same doubles as libm's pow).
    private static func halfOctaveCentre(_ k: Int) -> Double {
        let octaves = 250 * Double(1 << (k / 2))
        return k % 2 == 1 ? octaves * (2 as Double).squareRoot() : octaves
    }

    public var compresses: Bool { value >= 2 }
    public var expands: Bool { value >= 3 }
    public var limits: Bool { value >= 3 }
    /// Per-band attack and release (lower levels share one pair).
    public var perBandTimeConstants: Bool { value >= 4 }
}
