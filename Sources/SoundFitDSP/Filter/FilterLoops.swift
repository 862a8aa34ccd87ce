// The per-sample loops of `BiquadFilter`.
//
// Four channels share one SIMD4 lane group. A group is first interleaved into a small scratch of
// SIMD4 frames (zero in the unused lanes of the last group), the SVF recursion then runs on whole
// vectors (one vector load and store per frame), and the result is deinterleaved back. Keeping
// the recursion free of per-lane loads and stores lets the compiler keep every value in vector
// registers. With two or more groups, two are run in the same loop so that their independent
// recursions overlap in the pipeline (the recursion is latency-bound).
//
// Real-time safe: plain arithmetic on preallocated memory.

/// Loop coefficients splatted across the lanes (see `SVFLoopCoefficients`).
struct FilterTap {
    var c11, c12, c22, m0, h1, h2: SIMD4<Float>

    @inline(__always)
    init(_ c: SIMD8<Float>) {
        c11 = SIMD4(repeating: c[0])
        c12 = SIMD4(repeating: c[1])
        c22 = SIMD4(repeating: c[2])
        m0 = SIMD4(repeating: c[3])
        h1 = SIMD4(repeating: c[4])
        h2 = SIMD4(repeating: c[5])
    }

    /// One sample of the trapezoidal SVF. Every path from a state to its next value is one
    /// multiply and two adds (the recursion's latency); the state update is written as
    /// `state + small increments` so the increments keep full float precision.
    @inline(__always)
    func tick(_ x: SIMD4<Float>, _ ic1: inout SIMD4<Float>, _ ic2: inout SIMD4<Float>) -> SIMD4<Float> {
        let s1 = ic1, s2 = ic2
        let n1 = (s1 + c11 * s1) + c12 * (x - s2)
        let n2 = (s2 - c22 * s2) + (c12 * s1 + c22 * x)
        ic1 = n1
        ic2 = n2
        return m0 * x + h1 * (s1 + n1) + h2 * (s2 + n2)
    }
}

/// The two-step coefficients splatted across the lanes (see `SVFTwoStepCoefficients`).
struct FilterTwoStepTap {
    var one: FilterTap
    var e11, e12, e21, e22, f1, f2, b1, b2: SIMD4<Float>

    @inline(__always)
    init(_ one: SIMD8<Float>, _ two: SIMD8<Float>) {
        self.one = FilterTap(one)
        e11 = SIMD4(repeating: two[0])
        e12 = SIMD4(repeating: two[1])
        e21 = SIMD4(repeating: two[2])
        e22 = SIMD4(repeating: two[3])
        f1 = SIMD4(repeating: two[4])
        f2 = SIMD4(repeating: two[5])
        b1 = SIMD4(repeating: two[6])
        b2 = SIMD4(repeating: two[7])
    }

    /// Two samples: the state after both comes from the two-step update (the loop-carried
    /// chain), the state after the first only feeds the outputs.
    @inline(__always)
    func tick2(_ x0: SIMD4<Float>, _ x1: SIMD4<Float>, _ ic1: inout SIMD4<Float>, _ ic2: inout SIMD4<Float>)
        -> (SIMD4<Float>, SIMD4<Float>) {
        let s1 = ic1, s2 = ic2
        let input1 = f1 * x0 + b1 * x1
        let input2 = f2 * x0 + b2 * x1
        let n1 = (s1 + e11 * s1) + (e12 * s2 + input1)
        let n2 = (s2 + e22 * s2) + (e21 * s1 + input2)
        // The state after the first sample, for the outputs only.
        let h1 = (s1 + one.c11 * s1) + one.c12 * (x0 - s2)
        let h2 = (s2 - one.c22 * s2) + (one.c12 * s1 + one.c22 * x0)
        ic1 = n1
        ic2 = n2
        let y0 = one.m0 * x0 + one.h1 * (s1 + h1) + one.h2 * (s2 + h2)
        let y1 = one.m0 * x1 + one.h1 * (h1 + n1) + one.h2 * (h2 + n2)
        return (y0, y1)
    }
}

/// Per-sample interpolation of the loop coefficients and of the wet level inside one segment.
struct FilterRamp {
    var start: SIMD8<Float>
    var increment: SIMD8<Float>
    var wetStart: Float
    var wetIncrement: Float
    /// Samples of the segment processed before this call.
    var position: Int

    /// Coefficients and wet level for sample `i` of this call (`position + i + 1` steps in).
    @inline(__always)
    func at(_ i: Int) -> (tap: FilterTap, wet: SIMD4<Float>) {
        let t = Float(position &+ i &+ 1)
        return (FilterTap(start + increment * t), SIMD4(repeating: wetStart + wetIncrement * t))
    }
}

enum FilterLoops {
    /// `scratch[i] = (ch[base][start + i], ch[base + 1][start + i], ...)` for `lanes` channels,
    /// zero in the other lanes.
    @inline(__always)
    static func interleave(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, base: Int, lanes: Int,
                           start: Int, count: Int, into scratch: UnsafeMutablePointer<SIMD4<Float>>) {
        let p0 = buffers[base] + start
        switch lanes {
        case 1:
            for i in 0..<count { scratch[i] = SIMD4(p0[i], 0, 0, 0) }
        case 2:
            let p1 = buffers[base &+ 1] + start
            for i in 0..<count { scratch[i] = SIMD4(p0[i], p1[i], 0, 0) }
        case 3:
            let p1 = buffers[base &+ 1] + start, p2 = buffers[base &+ 2] + start
            for i in 0..<count { scratch[i] = SIMD4(p0[i], p1[i], p2[i], 0) }
        default:
            let p1 = buffers[base &+ 1] + start, p2 = buffers[base &+ 2] + start, p3 = buffers[base &+ 3] + start
            for i in 0..<count { scratch[i] = SIMD4(p0[i], p1[i], p2[i], p3[i]) }
        }
    }

    /// The inverse of `interleave`: writes the first `lanes` lanes back to the channels.
    @inline(__always)
    static func deinterleave(_ scratch: UnsafePointer<SIMD4<Float>>, into buffers: UnsafePointer<UnsafeMutablePointer<Float>>,
                             base: Int, lanes: Int, start: Int, count: Int) {
        let p0 = buffers[base] + start
        switch lanes {
        case 1:
            for i in 0..<count { p0[i] = scratch[i][0] }
        case 2:
            let p1 = buffers[base &+ 1] + start
            for i in 0..<count {
                let v = scratch[i]
                p0[i] = v[0]
                p1[i] = v[1]
            }
        case 3:
            let p1 = buffers[base &+ 1] + start, p2 = buffers[base &+ 2] + start
            for i in 0..<count {
                let v = scratch[i]
                p0[i] = v[0]
                p1[i] = v[1]
                p2[i] = v[2]
            }
        default:
            let p1 = buffers[base &+ 1] + start, p2 = buffers[base &+ 2] + start, p3 = buffers[base &+ 3] + start
            for i in 0..<count {
                let v = scratch[i]
                p0[i] = v[0]
                p1[i] = v[1]
                p2[i] = v[2]
                p3[i] = v[3]
            }
        }
    }

    /// Steady filter of one group. `odd`: the first frame has an odd absolute index; pairs are
    /// always (even, odd) frames so the result does not depend on how calls split the signal.
    @inline(__always)
    static func steadySingle(_ a: UnsafeMutablePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>,
                             count: Int, odd: Bool, tap: FilterTwoStepTap) {
        var s1 = states[0], s2 = states[1]
        var i = 0
        if odd && count > 0 {
            a[0] = tap.one.tick(a[0], &s1, &s2)
            i = 1
        }
        while i &+ 1 < count {
            let (y0, y1) = tap.tick2(a[i], a[i &+ 1], &s1, &s2)
            a[i] = y0
            a[i &+ 1] = y1
            i &+= 2
        }
        if i < count { a[i] = tap.one.tick(a[i], &s1, &s2) }
        states[0] = s1
        states[1] = s2
    }

    @inline(__always)
    static func steadyPair(_ a: UnsafeMutablePointer<SIMD4<Float>>, _ b: UnsafeMutablePointer<SIMD4<Float>>,
                           states: UnsafeMutablePointer<SIMD4<Float>>, count: Int, odd: Bool, tap: FilterTwoStepTap) {
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        var i = 0
        if odd && count > 0 {
            a[0] = tap.one.tick(a[0], &a1, &a2)
            b[0] = tap.one.tick(b[0], &b1, &b2)
            i = 1
        }
        while i &+ 1 < count {
            let (ya0, ya1) = tap.tick2(a[i], a[i &+ 1], &a1, &a2)
            let (yb0, yb1) = tap.tick2(b[i], b[i &+ 1], &b1, &b2)
            a[i] = ya0
            a[i &+ 1] = ya1
            b[i] = yb0
            b[i &+ 1] = yb1
            i &+= 2
        }
        if i < count {
            a[i] = tap.one.tick(a[i], &a1, &a2)
            b[i] = tap.one.tick(b[i], &b1, &b2)
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
    }

    @inline(__always)
    static func movingSingle(_ a: UnsafeMutablePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>,
                             count: Int, ramp: FilterRamp) {
        var s1 = states[0], s2 = states[1]
        for i in 0..<count {
            let (tap, wet) = ramp.at(i)
            let x = a[i]
            let y = tap.tick(x, &s1, &s2)
            a[i] = x + wet * (y - x)
        }
        states[0] = s1
        states[1] = s2
    }

    @inline(__always)
    static func movingPair(_ a: UnsafeMutablePointer<SIMD4<Float>>, _ b: UnsafeMutablePointer<SIMD4<Float>>,
                           states: UnsafeMutablePointer<SIMD4<Float>>, count: Int, ramp: FilterRamp) {
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        for i in 0..<count {
            let (tap, wet) = ramp.at(i)
            let xa = a[i], xb = b[i]
            let ya = tap.tick(xa, &a1, &a2)
            let yb = tap.tick(xb, &b1, &b2)
            a[i] = xa + wet * (ya - xa)
            b[i] = xb + wet * (yb - xb)
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
    }
}
