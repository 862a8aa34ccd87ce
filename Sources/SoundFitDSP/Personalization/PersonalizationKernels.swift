// The per-sample loops of the personalization processor. Every signal is a SIMD4 frame
// `(left low, right low, left high, right high)` of one channel pair (see `CrossoverTreeDesign`),
// held in small scratch "slots" of one control period. Real-time safe: plain arithmetic on
// preallocated memory.

enum PersonalizationKernels {
    /// `k = 1/Q = √2` of the Butterworth sections.
    @inline(__always) static var damping: SIMD4<Float> { SIMD4(repeating: 1.414_213_562_373_095) }

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

    /// LR4 split in place; `root`: lanes 0–1 keep the low part, lanes 2–3 the high part of the
    /// same input; otherwise the low part stays in `slot` and the high part goes to `high`.
    @inline(__always)
    static func split(_ slot: UnsafeMutablePointer<SIMD4<Float>>, high: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                      coefficients c: UnsafePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>, root: Bool) {
        let c11 = c[0], c12 = c[1], c22 = c[2], k = damping, half = SIMD4<Float>(repeating: 0.5)
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        if root {
            let highLanes = SIMD4<Int32>(0, 0, 1, 1) .!= 0
            for i in 0..<count {
                let x = slot[i]
                let (band, low) = tick(x, &a1, &a2, c11, c12, c22)
                let allpass = x - k * band
                let (_, low2) = tick(half * low, &b1, &b2, c11, c12, c22)
                let lp4 = half * low2
                slot[i] = lp4.replacing(with: allpass - lp4, where: highLanes)
            }
        } else {
            for i in 0..<count {
                let x = slot[i]
                let (band, low) = tick(x, &a1, &a2, c11, c12, c22)
                let allpass = x - k * band
                let (_, low2) = tick(half * low, &b1, &b2, c11, c12, c22)
                let lp4 = half * low2
                slot[i] = lp4
                high[i] = allpass - lp4
            }
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
    }

    /// A chain of `chain` second-order all-passes (`x − k·2v1`) in place. Chains of one to three
    /// keep their states in registers; longer chains run in passes of up to three.
    @inline(__always)
    static func allpass(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int, chain: Int,
                        coefficients: UnsafePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>) {
        var done = 0
        while done < chain {
            let n = min(3, chain &- done)
            let c = coefficients + 3 &* done, s = states + 2 &* done
            switch n {
            case 1: allpass1(slot, count: count, c, s)
            case 2: allpass2(slot, count: count, c, s)
            default: allpass3(slot, count: count, c, s)
            }
            done &+= n
        }
    }

    @inline(__always)
    static func allpass1(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                         _ c: UnsafePointer<SIMD4<Float>>, _ s: UnsafeMutablePointer<SIMD4<Float>>) {
        let k = damping
        let p11 = c[0], p12 = c[1], p22 = c[2]
        var x1 = s[0], x2 = s[1]
        for i in 0..<count {
            let x = slot[i]
            let (band, _) = tick(x, &x1, &x2, p11, p12, p22)
            slot[i] = x - k * band
        }
        s[0] = x1
        s[1] = x2
    }

    @inline(__always)
    static func allpass2(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                         _ c: UnsafePointer<SIMD4<Float>>, _ s: UnsafeMutablePointer<SIMD4<Float>>) {
        let k = damping
        let p11 = c[0], p12 = c[1], p22 = c[2], q11 = c[3], q12 = c[4], q22 = c[5]
        var x1 = s[0], x2 = s[1], y1 = s[2], y2 = s[3]
        for i in 0..<count {
            let x = slot[i]
            let (band, _) = tick(x, &x1, &x2, p11, p12, p22)
            let y = x - k * band
            let (band2, _) = tick(y, &y1, &y2, q11, q12, q22)
            slot[i] = y - k * band2
        }
        s[0] = x1
        s[1] = x2
        s[2] = y1
        s[3] = y2
    }

    @inline(__always)
    static func allpass3(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                         _ c: UnsafePointer<SIMD4<Float>>, _ s: UnsafeMutablePointer<SIMD4<Float>>) {
        let k = damping
        let p11 = c[0], p12 = c[1], p22 = c[2], q11 = c[3], q12 = c[4], q22 = c[5]
        let r11 = c[6], r12 = c[7], r22 = c[8]
        var x1 = s[0], x2 = s[1], y1 = s[2], y2 = s[3], z1 = s[4], z2 = s[5]
        for i in 0..<count {
            let x = slot[i]
            let (band, _) = tick(x, &x1, &x2, p11, p12, p22)
            let y = x - k * band
            let (band2, _) = tick(y, &y1, &y2, q11, q12, q22)
            let z = y - k * band2
            let (band3, _) = tick(z, &z1, &z2, r11, r12, r22)
            slot[i] = z - k * band3
        }
        s[0] = x1
        s[1] = x2
        s[2] = y1
        s[3] = y2
        s[4] = z1
        s[5] = z2
    }

    /// One band vector: accumulates the detector sums (`Σ w1·x²`, `Σ w2·x²` at segment positions
    /// `position…`) and adds `gain·x` to `output` (or stores it, for the first band), the gain
    /// moving by `step` per sample.
    @inline(__always)
    static func band(_ slot: UnsafePointer<SIMD4<Float>>, output: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                     weights: UnsafePointer<SIMD4<Float>>, state: UnsafeMutablePointer<BandState>, first: Bool) {
        var sum1 = state.pointee.sum1, sum2 = state.pointee.sum2
        var gain = state.pointee.gain
        let step = state.pointee.gainStep
        if first {
            for i in 0..<count {
                let x = slot[i]
                let power = x * x
                sum1 += weights[2 &* i] * power
                sum2 += weights[2 &* i &+ 1] * power
                gain += step
                output[i] = gain * x
            }
        } else {
            for i in 0..<count {
                let x = slot[i]
                let power = x * x
                sum1 += weights[2 &* i] * power
                sum2 += weights[2 &* i &+ 1] * power
                gain += step
                output[i] += gain * x
            }
        }
        state.pointee.sum1 = sum1
        state.pointee.sum2 = sum2
        state.pointee.gain = gain
    }

    /// Sums the low and high lanes back into the pair's channels, cross-fading with the dry input
    /// by `wet` (nil: fully wet). In place: `first`/`second` hold the dry input on entry.
    @inline(__always)
    static func deinterleave(_ output: UnsafePointer<SIMD4<Float>>, count: Int, wet: UnsafePointer<Float>?,
                             _ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>?) {
        if let wet {
            for i in 0..<count {
                let v = output[i], w = wet[i]
                let x0 = first[i]
                first[i] = x0 + w * ((v[0] + v[2]) - x0)
                if let second {
                    let x1 = second[i]
                    second[i] = x1 + w * ((v[1] + v[3]) - x1)
                }
            }
        } else if let second {
            for i in 0..<count {
                let v = output[i]
                first[i] = v[0] + v[2]
                second[i] = v[1] + v[3]
            }
        } else {
            for i in 0..<count {
                let v = output[i]
                first[i] = v[0] + v[2]
            }
        }
    }
}

/// The running state of one band vector of one channel pair.
struct BandState {
    /// Pre-smoother states (two one-poles on x²) at the start of the current control period.
    var e1 = SIMD4<Float>()
    var e2 = SIMD4<Float>()
    /// The attack/release envelope (power).
    var envelope = SIMD4<Float>()
    /// Weighted sums of x² over the current period (see `BandLaw.preDecay`).
    var sum1 = SIMD4<Float>()
    var sum2 = SIMD4<Float>()
    /// Linear band gain now, and its per-sample step toward the next control value.
    var gain = SIMD4<Float>(repeating: 1)
    var gainStep = SIMD4<Float>()
    /// The last band gain in dB (including a running preset cross-over) and band level in dB SPL.
    var gainDecibels = SIMD4<Float>()
    var level = SIMD4<Float>()
    /// dB added to the gain law while a preset change ramps (scaled by the ramp from 1 to 0).
    var presetOffset = SIMD4<Float>()
}
