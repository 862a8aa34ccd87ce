import SoundFitModel

/// Everything the personalization processor reads while it runs a preset: the filter constants
/// of the analysis bank and the cascade (see `EqualizerDesign`), the constants of the bell-gain
/// iteration, the per-band gain laws and the detector weights, in flat preallocated memory with
/// the capacity of the largest tech level.
///
/// Lanes: a band vector `b` holds bands `2b` and `2b+1` of both ears,
/// `(left 2b, right 2b, left 2b+1, right 2b+1)`; so does bell vector `b`. The shelf vector holds
/// `(left low, right low, left high, right high)`.
///
/// `PreparedPersonalization` builds one off the audio thread; installing it copies it into the
/// processor's own image (a few kilobytes, real-time safe), so that the prepared object can be
/// handed back at once and a fade-out never needs it.
struct PersonalizationImage {
    /// Samples per control period: levels and gains are computed once per period, and the
    /// cascade's coefficients interpolated linearly per sample in between.
    static var controlPeriod: Int { 32 }
    /// Band vectors of the largest tech level (12 bands, two per vector).
    static var maximumHalfCount: Int { MultibandLayout.maximumBandCount / 2 }
    /// Cascade section vectors: the bell vectors plus the shelf vector.
    static var maximumSectionVectors: Int { maximumHalfCount + 1 }

    var techLevel = 0
    /// Band vectors (= bell vectors) of this tech level.
    var halfCount = 0
    var sampleRate = 0.0
    /// The detector stages this preset's bands use at most (`DetectorDesign.order`): the
    /// control-rate update runs only those (the others would pass their input on).
    var detectorStages = 1
    /// Per band vector: the analysis SVF's `c11, c12, c22` and the band-pass scale `k/2`.
    let analysis: UnsafeMutablePointer<SIMD4<Float>>
    /// Per bell vector: the prewarped frequency `g` and the damping `1/Q` at 0 dB.
    let bells: UnsafeMutablePointer<SIMD4<Float>>
    /// The shelves' prewarped corner frequencies `(low, low, high, high)`.
    var shelfG = SIMD4<Float>()
    /// `uSame[κ·max + σ]`: bell vector σ's constants at band vector κ's centres, lane by lane;
    /// `uCross` the same with σ's halves swapped (bell 2σ+1 at centre 2κ, bell 2σ at 2κ+1).
    let uSame: UnsafeMutablePointer<SIMD4<Float>>
    let uCross: UnsafeMutablePointer<SIMD4<Float>>
    /// Per band vector: the low shelf's and the high shelf's constants at its centres.
    let uLow: UnsafeMutablePointer<SIMD4<Float>>
    let uHigh: UnsafeMutablePointer<SIMD4<Float>>
    /// `interactionSame[σ·max + κ]`: the inverse interaction matrix entries from band vector κ's
    /// errors to bell vector σ, lane by lane; `interactionCross` from κ's swapped halves.
    let interactionSame: UnsafeMutablePointer<SIMD4<Float>>
    let interactionCross: UnsafeMutablePointer<SIMD4<Float>>
    let laws: UnsafeMutablePointer<BandLaw>
    /// Per band vector, `DetectorDesign.maximumOrder` stage coefficients of the control-rate
    /// detector: the first stage's own, then the chain's, 1 (pass on) past each lane's order.
    let detectorCoefficients: UnsafeMutablePointer<SIMD4<Float>>
    /// Per band vector, `controlPeriod` pairs `(w1, w2)`: the detector's per-position weights.
    let weights: UnsafeMutablePointer<SIMD4<Float>>

    private static var matrixCount: Int { maximumHalfCount * maximumHalfCount }

    static func allocate() -> PersonalizationImage {
        func vectors(_ count: Int) -> UnsafeMutablePointer<SIMD4<Float>> {
            let pointer = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: count)
            pointer.initialize(repeating: SIMD4(), count: count)
            return pointer
        }
        let laws = UnsafeMutablePointer<BandLaw>.allocate(capacity: maximumHalfCount)
        laws.initialize(repeating: BandLaw(), count: maximumHalfCount)
        let detectorCoefficients = vectors(DetectorDesign.maximumOrder * maximumHalfCount)
        detectorCoefficients.update(repeating: SIMD4(repeating: 1), count: DetectorDesign.maximumOrder * maximumHalfCount)
        return PersonalizationImage(
            analysis: vectors(4 * maximumHalfCount), bells: vectors(2 * maximumHalfCount),
            uSame: vectors(matrixCount), uCross: vectors(matrixCount),
            uLow: vectors(maximumHalfCount), uHigh: vectors(maximumHalfCount),
            interactionSame: vectors(matrixCount), interactionCross: vectors(matrixCount),
            laws: laws, detectorCoefficients: detectorCoefficients,
            weights: vectors(2 * controlPeriod * maximumHalfCount))
    }

    func deallocate() {
        for pointer in [analysis, bells, uSame, uCross, uLow, uHigh, interactionSame, interactionCross, detectorCoefficients,
                        weights] {
            pointer.deallocate()
        }
        laws.deallocate()
    }

    /// Copies `other` into this image's memory. Real-time safe.
    mutating func copy(from other: PersonalizationImage) {
        techLevel = other.techLevel
        halfCount = other.halfCount
        sampleRate = other.sampleRate
        detectorStages = other.detectorStages
        shelfG = other.shelfG
        for i in 0..<(4 * Self.maximumHalfCount) { analysis[i] = other.analysis[i] }
        for i in 0..<(2 * Self.maximumHalfCount) { bells[i] = other.bells[i] }
        for i in 0..<Self.matrixCount {
            uSame[i] = other.uSame[i]
            uCross[i] = other.uCross[i]
            interactionSame[i] = other.interactionSame[i]
            interactionCross[i] = other.interactionCross[i]
        }
        for i in 0..<Self.maximumHalfCount {
            uLow[i] = other.uLow[i]
            uHigh[i] = other.uHigh[i]
            laws[i] = other.laws[i]
        }
        for i in 0..<(DetectorDesign.maximumOrder * Self.maximumHalfCount) {
            detectorCoefficients[i] = other.detectorCoefficients[i]
        }
        for i in 0..<(2 * Self.controlPeriod * Self.maximumHalfCount) { weights[i] = other.weights[i] }
    }
}

/// The gain law and detector constants of one band vector (lanes: left band 2b, right band 2b,
/// left band 2b+1, right band 2b+1), in the form the control-rate update evaluates:
///
///     L = 10·log10(2)·log2(power) + levelOffset
///     g = intercept + slope·max(L, knee) − expansionSlope·max(expansionKnee − L, 0)
///     g = min(max(g, minimumGain), maximumGain, outputLimit − L)
struct BandLaw {
    var intercept = SIMD4<Float>()
    var slope = SIMD4<Float>()
    var knee = SIMD4<Float>()
    var expansionKnee = SIMD4<Float>(repeating: -1000)
    var expansionSlope = SIMD4<Float>()
    var maximumGain = SIMD4<Float>()
    /// The gain floor (`BandDynamics.minimumGain`), applied after expansion.
    var minimumGain = SIMD4<Float>(repeating: -150)
    var outputLimit = SIMD4<Float>(repeating: 1000)
    var levelOffset = SIMD4<Float>()
    /// The control-rate detector's (`DetectorDesign`) weight of the first stage in the mix with
    /// the last; its coefficients are `PersonalizationImage.detectorCoefficients`.
    var firstStageWeight = SIMD4<Float>(repeating: 1)
    /// The pre-smoother (two one-poles on x²) over one control period: `r^P` and `P·a·r^P`.
    var preDecay = SIMD4<Float>()
    var preCross = SIMD4<Float>()
    /// The detector power at which a band reads its reference level (the start value).
    var referencePower = SIMD4<Float>(repeating: 1e-3)

    /// The band multiplier (dB) at level `level` (dB SPL). Real-time safe.
    @inline(__always)
    func gain(atLevel level: SIMD4<Float>) -> SIMD4<Float> {
        var g = intercept + slope * maximum(level, knee)
        g -= expansionSlope * maximum(expansionKnee - level, SIMD4())
        g = minimum(minimum(maximum(g, minimumGain), maximumGain), outputLimit - level)
        return maximum(g, SIMD4(repeating: -150))
    }

    /// The band level (dB SPL) of detector power `power`. Real-time safe.
    @inline(__always)
    func level(ofPower power: SIMD4<Float>) -> SIMD4<Float> {
        // 10·log10(2) = 3.0103: log2 to power dB.
        SIMD4(repeating: 3.010_299_956_6) * fastLog2(maximum(power, SIMD4(repeating: 1e-30))) + levelOffset
    }
}

/// Lane-wise maximum and minimum, inlined (the standard library's `pointwiseMax`/`pointwiseMin`
/// are calls on this toolchain, a measurable share of the control-rate update). Real-time safe.
@inline(__always)
func maximum(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .> a) }

@inline(__always)
func minimum(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .< a) }

@inline(__always)
func maximum(_ a: SIMD2<Float>, _ b: SIMD2<Float>) -> SIMD2<Float> { a.replacing(with: b, where: b .> a) }

@inline(__always)
func minimum(_ a: SIMD2<Float>, _ b: SIMD2<Float>) -> SIMD2<Float> { a.replacing(with: b, where: b .< a) }

/// log2 of positive normal floats, error < 4e-7 (1.2e-6 dB). Real-time safe.
@inline(__always)
func fastLog2(_ x: SIMD4<Float>) -> SIMD4<Float> {
    let bits = unsafeBitCast(x, to: SIMD4<UInt32>.self)
    let exponent = SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: bits &>> 23) &- 127)
    let mantissa = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: SIMD4<Float>.self) - 1
    var p = SIMD4<Float>(repeating: 0.015_530_868_317_642)
    p = p * mantissa + SIMD4(repeating: -0.079_560_658_867_049)
    p = p * mantissa + SIMD4(repeating: 0.194_297_780_425_777)
    p = p * mantissa + SIMD4(repeating: -0.325_903_929_939_605)
    p = p * mantissa + SIMD4(repeating: 0.473_553_948_954_082)
    p = p * mantissa + SIMD4(repeating: -0.720_585_532_478_171)
    p = p * mantissa + SIMD4(repeating: 1.442_667_831_399_990)
    return exponent + p * mantissa
}

/// 2^y for y in about ±126 (clamped), relative error < 1.2e-7. Real-time safe.
@inline(__always)
func fastExp2(_ y: SIMD4<Float>) -> SIMD4<Float> {
    let t = minimum(maximum(y, SIMD4(repeating: -125)), SIMD4(repeating: 125)) + 127
    // Round t − ½ to an integer by adding 2²³ (so the integer sits in the mantissa bits): a floor
    // of t, or one less at exact integers (then f = 1, and q(1) = 2 keeps the result continuous).
    let shifted = (t - 0.5) + 8_388_608
    let whole = unsafeBitCast(shifted, to: SIMD4<Int32>.self) & 0x007F_FFFF
    let f = t - (shifted - 8_388_608)
    var q = SIMD4<Float>(repeating: 0.001_885_248_436_166)
    q = q * f + SIMD4(repeating: 0.008_973_486_045_478)
    q = q * f + SIMD4(repeating: 0.055_835_847_102_011)
    q = q * f + SIMD4(repeating: 0.240_152_830_349_840)
    q = q * f + SIMD4(repeating: 0.693_152_469_537_845)
    q = q * f + 1
    let bits = unsafeBitCast(q, to: SIMD4<UInt32>.self) &+ (SIMD4<UInt32>(truncatingIfNeeded: whole &- 127) &<< 23)
    return unsafeBitCast(bits, to: SIMD4<Float>.self)
}
