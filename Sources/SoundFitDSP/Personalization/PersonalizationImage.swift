/// Everything the personalization processor reads while it runs a preset: the tree program and
/// its coefficients, the per-band gain laws and the detector weights, in flat preallocated memory
/// with the capacity of the largest tech level.
///
/// `PreparedPersonalization` builds one off the audio thread; installing it copies it into the
/// processor's own image (a few kilobytes, real-time safe), so that the prepared object can be
/// handed back at once and a fade-out never needs it.
struct PersonalizationImage {
    /// Samples per control period: levels and gains are computed once per period, and gains
    /// interpolated linearly per sample in between.
    static var controlPeriod: Int { 32 }
    static var maximumHalfCount: Int { MultibandLayout.maximumBandCount / 2 }
    static var maximumOps: Int { 16 }
    static var maximumSets: Int { 24 }
    static var maximumStates: Int { 32 }
    static var maximumSlots: Int { 8 }

    var techLevel = 0
    var halfCount = 0
    var opCount = 0
    var slotCount = 0
    var stateCount = 0
    var sampleRate = 0.0

    let ops: UnsafeMutablePointer<TreeOp>
    /// Three SIMD4 (`c11, c12, c22`) per coefficient set.
    let coefficients: UnsafeMutablePointer<SIMD4<Float>>
    let bandSlots: UnsafeMutablePointer<Int>
    let laws: UnsafeMutablePointer<BandLaw>
    /// Per band vector, `controlPeriod` pairs `(w1, w2)`: the detector's per-position weights.
    let weights: UnsafeMutablePointer<SIMD4<Float>>

    static func allocate() -> PersonalizationImage {
        let ops = UnsafeMutablePointer<TreeOp>.allocate(capacity: maximumOps)
        ops.initialize(repeating: TreeOp(kind: .allpass, slot: 0, highSlot: 0, coefficients: 0, states: 0, count: 0),
                       count: maximumOps)
        let coefficients = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: 3 * maximumSets)
        coefficients.initialize(repeating: SIMD4(), count: 3 * maximumSets)
        let bandSlots = UnsafeMutablePointer<Int>.allocate(capacity: maximumHalfCount)
        bandSlots.initialize(repeating: 0, count: maximumHalfCount)
        let laws = UnsafeMutablePointer<BandLaw>.allocate(capacity: maximumHalfCount)
        laws.initialize(repeating: BandLaw(), count: maximumHalfCount)
        let weights = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: 2 * controlPeriod * maximumHalfCount)
        weights.initialize(repeating: SIMD4(), count: 2 * controlPeriod * maximumHalfCount)
        return PersonalizationImage(ops: ops, coefficients: coefficients, bandSlots: bandSlots, laws: laws, weights: weights)
    }

    func deallocate() {
        ops.deallocate()
        coefficients.deallocate()
        bandSlots.deallocate()
        laws.deallocate()
        weights.deallocate()
    }

    /// Copies `other` into this image's memory. Real-time safe.
    mutating func copy(from other: PersonalizationImage) {
        techLevel = other.techLevel
        halfCount = other.halfCount
        opCount = other.opCount
        slotCount = other.slotCount
        stateCount = other.stateCount
        sampleRate = other.sampleRate
        for i in 0..<Self.maximumOps { ops[i] = other.ops[i] }
        for i in 0..<(3 * Self.maximumSets) { coefficients[i] = other.coefficients[i] }
        for i in 0..<Self.maximumHalfCount {
            bandSlots[i] = other.bandSlots[i]
            laws[i] = other.laws[i]
        }
        for i in 0..<(2 * Self.controlPeriod * Self.maximumHalfCount) { weights[i] = other.weights[i] }
    }
}

/// The gain law and detector constants of one band vector (lanes: left band b, right band b,
/// left band h+b, right band h+b), in the form the control-rate update evaluates:
///
///     L = 10·log10(2)·log2(power) + levelOffset
///     g = intercept + slope·max(L, knee) − expansionSlope·max(expansionKnee − L, 0)
///     g = min(min(g, maximumGain) + fitOffset, outputLimit − L)
struct BandLaw {
    var intercept = SIMD4<Float>()
    var slope = SIMD4<Float>()
    var knee = SIMD4<Float>()
    var expansionKnee = SIMD4<Float>(repeating: -1000)
    var expansionSlope = SIMD4<Float>()
    var maximumGain = SIMD4<Float>()
    var fitOffset = SIMD4<Float>()
    var outputLimit = SIMD4<Float>(repeating: 1000)
    var levelOffset = SIMD4<Float>()
    /// Control-rate one-pole coefficients of the attack/release smoother.
    var attack = SIMD4<Float>(repeating: 1)
    var release = SIMD4<Float>(repeating: 1)
    /// The pre-smoother (two one-poles on x²) over one control period: `r^P` and `P·a·r^P`.
    var preDecay = SIMD4<Float>()
    var preCross = SIMD4<Float>()
    /// The detector power at which a band reads its reference level (the start value).
    var referencePower = SIMD4<Float>(repeating: 1e-3)

    /// The band multiplier (dB) at level `level` (dB SPL). Real-time safe.
    @inline(__always)
    func gain(atLevel level: SIMD4<Float>) -> SIMD4<Float> {
        var g = intercept + slope * pointwiseMax(level, knee)
        g -= expansionSlope * pointwiseMax(expansionKnee - level, SIMD4())
        g = pointwiseMin(pointwiseMin(g, maximumGain) + fitOffset, outputLimit - level)
        return pointwiseMax(g, SIMD4(repeating: -150))
    }

    /// The band level (dB SPL) of detector power `power`. Real-time safe.
    @inline(__always)
    func level(ofPower power: SIMD4<Float>) -> SIMD4<Float> {
        // 10·log10(2) = 3.0103: log2 to power dB.
        SIMD4(repeating: 3.010_299_956_6) * fastLog2(pointwiseMax(power, SIMD4(repeating: 1e-30))) + levelOffset
    }
}

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
    let t = pointwiseMin(pointwiseMax(y, SIMD4(repeating: -125)), SIMD4(repeating: 125)) + 127
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
