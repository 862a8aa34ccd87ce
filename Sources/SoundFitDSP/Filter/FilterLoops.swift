// The per-sample loops of `BiquadFilter`. Four channels share one SIMD4 lane group; with two or
// more groups, two are run in the same loop so that their independent recurrences overlap in the
// pipeline (the SVF recursion is latency-bound, not throughput-bound).
//
// Real-time safe: plain arithmetic on preallocated memory.

/// Read and write pointers of the four lanes of one group (padding lanes read silence and write
/// to a discard buffer; real lanes read and write the same channel buffer, in place).
struct FilterLanes {
    var r0, r1, r2, r3: UnsafePointer<Float>
    var w0, w1, w2, w3: UnsafeMutablePointer<Float>

    @inline(__always)
    func load(_ i: Int) -> SIMD4<Float> { SIMD4(r0[i], r1[i], r2[i], r3[i]) }

    @inline(__always)
    func store(_ y: SIMD4<Float>, _ i: Int) {
        w0[i] = y[0]
        w1[i] = y[1]
        w2[i] = y[2]
        w3[i] = y[3]
    }
}

/// Loop coefficients splatted across the lanes (see `SVFLoopCoefficients`).
struct FilterTap {
    var c11, c12, c22, m0, h1, h2: SIMD4<Float>

    @inline(__always)
    init(c11: SIMD4<Float>, c12: SIMD4<Float>, c22: SIMD4<Float>, m0: SIMD4<Float>, h1: SIMD4<Float>, h2: SIMD4<Float>) {
        self.c11 = c11
        self.c12 = c12
        self.c22 = c22
        self.m0 = m0
        self.h1 = h1
        self.h2 = h2
    }

    @inline(__always)
    init(_ c: SIMD8<Float>) {
        self.init(c11: SIMD4(repeating: c[0]), c12: SIMD4(repeating: c[1]), c22: SIMD4(repeating: c[2]),
                  m0: SIMD4(repeating: c[3]), h1: SIMD4(repeating: c[4]), h2: SIMD4(repeating: c[5]))
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

/// Per-sample interpolation of the loop coefficients and of the wet level inside one segment.
struct FilterRamp {
    var start: SIMD8<Float>
    var increment: SIMD8<Float>
    var wetStart: Float
    var wetIncrement: Float
    /// Samples of the segment already processed.
    var position: Int

    /// Coefficients and wet level for sample `i` of this call (`position + i + 1` steps in).
    @inline(__always)
    func at(_ i: Int) -> (tap: FilterTap, wet: SIMD4<Float>) {
        let t = Float(position &+ i &+ 1)
        return (FilterTap(start + increment * t), SIMD4(repeating: wetStart + wetIncrement * t))
    }
}

enum FilterLoops {
    @inline(__always)
    static func steadySingle(_ a: FilterLanes, states: UnsafeMutablePointer<SIMD4<Float>>, count: Int, tap: FilterTap) {
        var s1 = states[0], s2 = states[1]
        for i in 0..<count {
            let y = tap.tick(a.load(i), &s1, &s2)
            a.store(y, i)
        }
        states[0] = s1
        states[1] = s2
    }

    @inline(__always)
    static func steadyPair(_ a: FilterLanes, _ b: FilterLanes, states: UnsafeMutablePointer<SIMD4<Float>>,
                           count: Int, tap: FilterTap) {
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        for i in 0..<count {
            let xa = a.load(i), xb = b.load(i)
            let ya = tap.tick(xa, &a1, &a2)
            let yb = tap.tick(xb, &b1, &b2)
            a.store(ya, i)
            b.store(yb, i)
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
    }

    @inline(__always)
    static func movingSingle(_ a: FilterLanes, states: UnsafeMutablePointer<SIMD4<Float>>, count: Int, ramp: FilterRamp) {
        var s1 = states[0], s2 = states[1]
        for i in 0..<count {
            let (tap, wet) = ramp.at(i)
            let x = a.load(i)
            let y = tap.tick(x, &s1, &s2)
            a.store(x + wet * (y - x), i)
        }
        states[0] = s1
        states[1] = s2
    }

    @inline(__always)
    static func movingPair(_ a: FilterLanes, _ b: FilterLanes, states: UnsafeMutablePointer<SIMD4<Float>>,
                           count: Int, ramp: FilterRamp) {
        var a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3]
        for i in 0..<count {
            let (tap, wet) = ramp.at(i)
            let xa = a.load(i), xb = b.load(i)
            let ya = tap.tick(xa, &a1, &a2)
            let yb = tap.tick(xb, &b1, &b2)
            a.store(xa + wet * (ya - xa), i)
            b.store(xb + wet * (yb - xb), i)
        }
        states[0] = a1
        states[1] = a2
        states[2] = b1
        states[3] = b2
    }
}
