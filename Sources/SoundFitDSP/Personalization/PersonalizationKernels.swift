// The per-sample loops of the personalization processor, on one channel pair. The pair's signal
// lives in a small scratch of one control period: SIMD4 frames `(left, right, left, right)` on
// input, `(·, ·, left, right)` after the cascade. Real-time safe: plain arithmetic on
// preallocated memory.

enum PersonalizationKernels {
    /// One TPT SVF update (`FilterTap.tick` in the precise `state + increments` form) returning
    /// `2·v1` and `2·v2` (band and low-pass times two).
    @inline(__always)
    static func tick(_ x: SIMD4<Float>, _ s1: inout SIMD4<Float>, _ s2: inout SIMD4<Float>,
                     _ c11: SIMD4<Float>, _ c12: SIMD4<Float>, _ c22: SIMD4<Float>) -> (SIMD4<Float>, SIMD4<Float>) {
        let a = s1, b = s2
        let n1 = (a + c11 * a) + c12 * (x - b)
        let n2 = (b - c22 * b) + (c12 * a + c22 * x)
        s1 = n1
        s2 = n2
        return (a + n1, b + n2)
    }

    /// `(x0, x1, x0, x1)` frames of a channel pair (`x1` = 0 for a lone last channel).
    @inline(__always)
    static func interleave(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>?, count: Int,
                           into slot: UnsafeMutablePointer<SIMD4<Float>>) {
        if let second {
            for i in 0..<count { slot[i] = SIMD4(first[i], second[i], first[i], second[i]) }
        } else {
            for i in 0..<count { slot[i] = SIMD4(first[i], 0, first[i], 0) }
        }
    }

    // MARK: Analysis bank

    /// Two band vectors of the analysis bank over the pair's input: each band-pass output `y`
    /// adds `w1·y²` and `w2·y²` (segment positions from `weights`) to its detector sums. Two
    /// vectors per loop so that their independent recursions overlap.
    @inline(__always)
    static func analyze2(_ slot: UnsafePointer<SIMD4<Float>>, count: Int,
                         filters: UnsafePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>,
                         weights: UnsafePointer<SIMD4<Float>>, otherWeights: UnsafePointer<SIMD4<Float>>,
                         detectors: UnsafeMutablePointer<BandState>) {
        let p11 = filters[0], p12 = filters[1], p22 = filters[2], pScale = filters[3]
        let q11 = filters[4], q12 = filters[5], q22 = filters[6], qScale = filters[7]
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        var sum1 = detectors[0].sum1, sum2 = detectors[0].sum2
        var other1 = detectors[1].sum1, other2 = detectors[1].sum2
        for i in 0..<count {
            let input = slot[i]
            let (band, _) = tick(input, &a1, &a2, p11, p12, p22)
            let (band2, _) = tick(input, &b1, &b2, q11, q12, q22)
            let y = pScale * band, z = qScale * band2
            let power = y * y, power2 = z * z
            sum1 += weights[2 &* i] * power
            sum2 += weights[2 &* i &+ 1] * power
            other1 += otherWeights[2 &* i] * power2
            other2 += otherWeights[2 &* i &+ 1] * power2
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
        detectors[0].sum1 = sum1
        detectors[0].sum2 = sum2
        detectors[1].sum1 = other1
        detectors[1].sum2 = other2
    }

    /// One band vector of the analysis bank (see `analyze2`).
    @inline(__always)
    static func analyze1(_ slot: UnsafePointer<SIMD4<Float>>, count: Int,
                         filters: UnsafePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>,
                         weights: UnsafePointer<SIMD4<Float>>, detector: UnsafeMutablePointer<BandState>) {
        let p11 = filters[0], p12 = filters[1], p22 = filters[2], pScale = filters[3]
        var a1 = states[0], a2 = states[1]
        var sum1 = detector.pointee.sum1, sum2 = detector.pointee.sum2
        for i in 0..<count {
            let (band, _) = tick(slot[i], &a1, &a2, p11, p12, p22)
            let y = pScale * band
            let power = y * y
            sum1 += weights[2 &* i] * power
            sum2 += weights[2 &* i &+ 1] * power
        }
        states[0] = a1
        states[1] = a2
        detector.pointee.sum1 = sum1
        detector.pointee.sum2 = sum2
    }

    // MARK: Cascade

    /// The whole cascade of a channel pair over one segment, in place, as a systolic array:
    /// section `j` (lanes 0–1 of vector `j/2` for even `j`, lanes 2–3 for odd `j`) works on
    /// sample `i − j` in iteration `i`, taking its input from section `j − 1`'s output of the
    /// previous iteration. So no section waits for another within an iteration (only each
    /// section's own recursion is carried from one iteration to the next), and stereo fills all
    /// four lanes. The first and last `2·vectors − 1` iterations run the pipeline full and empty
    /// with the idle sections' states held (vectors with no active section are skipped), so the
    /// cascade adds no delay.
    ///
    /// Frames in `slot` are `(·, ·, left, right)` on entry and exit. `states` holds three SIMD4
    /// per vector: the two SVF states and the vector's last output. The last vector holds the
    /// shelves, the others bells (whose low-pass mix is 0). The core coefficients are fixed for
    /// the segment; the output mix moves linearly per sample (`SectionRamp`).
    @inline(__always)
    static func cascade(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int, vectors: Int,
                        ramps: UnsafeMutablePointer<SectionRamp>, states: UnsafeMutablePointer<SIMD4<Float>>) {
        let last = 2 &* vectors &- 1
        let output = states + (3 &* (vectors &- 1) &+ 2)
        var i = 0
        // Steady iterations (every section on a sample of this segment) need no masks.
        while i < count &+ last {
            if i >= last && i < count {
                let position = SIMD4<Float>(repeating: Float(i &+ 1))
                var q = vectors &- 1
                while q > 0 {
                    section(ramps + q, states + 3 &* q, upstream: states[3 &* q &- 1], position: position)
                    q &-= 1
                }
                section(ramps, states, upstream: slot[i], position: position)
            } else {
                // Filling or draining: only vectors with an active section (`i − 2q` within
                // `0…count`, give or take the odd lane, which the masks handle).
                let position = SIMD4<Float>(repeating: Float(i &+ 1))
                let iteration = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: i))
                let countVector = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: count))
                let lowest = i > count ? (i &- count) &>> 1 : 0
                var q = Swift.min(vectors &- 1, i &>> 1)
                while q >= lowest {
                    let upstream = q == 0 ? slot[Swift.min(i, count &- 1)] : states[3 &* q &- 1]
                    let sample = iteration &- ramps[q].sections
                    section(ramps + q, states + 3 &* q, upstream: upstream, position: position,
                            active: (sample .>= 0) .& (sample .< countVector))
                    q &-= 1
                }
            }
            if i >= last { slot[i &- last] = output.pointee }
            i &+= 1
        }
        for q in 0..<vectors { ramps[q].advance(by: count) }
    }

    /// One iteration of one cascade vector: input `(upstream[2], upstream[3], own[0], own[1])`
    /// (the previous sections' outputs of the last iteration), states advanced where `active`.
    @inline(__always)
    private static func section(_ r: UnsafeMutablePointer<SectionRamp>, _ s: UnsafeMutablePointer<SIMD4<Float>>,
                                upstream: SIMD4<Float>, position: SIMD4<Float>, active: SIMDMask<SIMD4<Int32>>? = nil) {
        let own = s[2]
        let x = SIMD4(upstream[2], upstream[3], own[0], own[1])
        var s1 = s[0], s2 = s[1]
        let (band, low) = tick(x, &s1, &s2, r.pointee.c11, r.pointee.c12, r.pointee.c22)
        let samples = position - r.pointee.lanes
        let h1 = r.pointee.h1 + samples * r.pointee.dh1
        let h2 = r.pointee.h2 + samples * r.pointee.dh2
        s[2] = x + h1 * band + h2 * low
        if let active {
            s[0] = s[0].replacing(with: s1, where: active)
            s[1] = s[1].replacing(with: s2, where: active)
        } else {
            s[0] = s1
            s[1] = s2
        }
    }

    /// Writes the pair's cascade output back to its channels, times the broadband gain (moving
    /// per sample by `broadbandStep`), cross-fading with the dry input by `wet` (nil: fully wet).
    /// In place: `first`/`second` hold the dry input on entry.
    @inline(__always)
    static func deinterleave(_ slot: UnsafePointer<SIMD4<Float>>, count: Int, broadband: inout SIMD4<Float>,
                             broadbandStep: SIMD4<Float>, wet: UnsafePointer<Float>?,
                             _ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>?) {
        var gain = broadband
        if let wet {
            for i in 0..<count {
                gain += broadbandStep
                let v = gain * slot[i], w = wet[i]
                let x0 = first[i]
                first[i] = x0 + w * (v[2] - x0)
                if let second {
                    let x1 = second[i]
                    second[i] = x1 + w * (v[3] - x1)
                }
            }
        } else if let second {
            for i in 0..<count {
                gain += broadbandStep
                let v = gain * slot[i]
                first[i] = v[2]
                second[i] = v[3]
            }
        } else {
            for i in 0..<count {
                gain += broadbandStep
                first[i] = gain[2] * slot[i][2]
            }
        }
        broadband = gain
    }
}

/// The coefficients of a cascade section vector for the current control period: the SVF core
/// (`c11, c12, c22`, see `SVFLoopCoefficients`), fixed for the period, and the output mix
/// `y = x + h1·2v1 + h2·2v2` at the last processed sample with its change per sample.
struct SectionRamp {
    var c11 = SIMD4<Float>(), c12 = SIMD4<Float>(), c22 = SIMD4<Float>()
    var h1 = SIMD4<Float>(), h2 = SIMD4<Float>()
    var dh1 = SIMD4<Float>(), dh2 = SIMD4<Float>()
    /// The cascade index of each lane's section (`2q, 2q, 2q+1, 2q+1`), as integers and floats.
    var sections = SIMD4<Int32>()
    var lanes = SIMD4<Float>()

    init(vector q: Int = 0) {
        let even = Int32(truncatingIfNeeded: 2 &* q)
        sections = SIMD4(even, even, even &+ 1, even &+ 1)
        lanes = SIMD4<Float>(sections)
    }

    @inline(__always)
    mutating func advance(by count: Int) {
        let n = SIMD4<Float>(repeating: Float(count))
        h1 += n * dh1
        h2 += n * dh2
    }

    /// Takes `target`'s core at once and moves the mix toward it over `steps` samples, or jumps
    /// there (`snap`).
    @inline(__always)
    mutating func setTarget(_ target: SectionRamp, steps: SIMD4<Float>, snap: Bool) {
        c11 = target.c11
        c12 = target.c12
        c22 = target.c22
        if snap {
            h1 = target.h1
            h2 = target.h2
            dh1 = SIMD4()
            dh2 = SIMD4()
        } else {
            dh1 = (target.h1 - h1) * steps
            dh2 = (target.h2 - h2) * steps
        }
    }
}

/// The level detector of one band vector of one channel pair.
struct BandState {
    /// Pre-smoother states (two one-poles on x²) at the start of the current control period.
    var e1 = SIMD4<Float>()
    var e2 = SIMD4<Float>()
    /// The attack/release envelope (power).
    var envelope = SIMD4<Float>()
    /// Weighted sums of x² over the current period (see `BandLaw.preDecay`).
    var sum1 = SIMD4<Float>()
    var sum2 = SIMD4<Float>()
    /// The last band gain in dB (including a running preset cross-over) and band level in dB SPL.
    var gainDecibels = SIMD4<Float>()
    var level = SIMD4<Float>()
    /// dB added to the gain law while a preset change ramps (scaled by the ramp from 1 to 0).
    var presetOffset = SIMD4<Float>()
    /// The band gain in dB the cascade is solved for (after intensity): what the band applies.
    var appliedDecibels = SIMD4<Float>()
}
