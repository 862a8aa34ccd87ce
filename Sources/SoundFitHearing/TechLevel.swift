import SoundFitDSP
import SoundFitModel

/// What a processor can do at a tech level:
///
/// | tech level | bands | processing |
/// | --- | --- | --- |
/// | 1 | 4 (500, 1k, 2k, 4k) | static EQ only |
/// | 2 | 6 (octaves 250…8k) | EQ + compression |
/// | 3 | 8 (250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k) | compression + expansion + per-band limiter |
/// | 4 | 12 (half octaves 250…11.3k) | as 3, per-band attack/release |
extension TechLevel {
    /// Band centre frequencies in Hz: the processor's layout (`MultibandLayout`), so a preset
    /// is generated for exactly the bands that apply it.
    public var bandCentres: [Double] { MultibandLayout(techLevel: value)!.bandCentres }

    public var compresses: Bool { value >= 2 }
    public var expands: Bool { value >= 3 }
    public var limits: Bool { value >= 3 }
    /// Per-band attack and release (lower levels share one pair).
    public var perBandTimeConstants: Bool { value >= 4 }
}
