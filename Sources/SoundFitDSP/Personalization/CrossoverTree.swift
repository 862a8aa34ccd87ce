/// The Linkwitz–Riley (LR4) crossover tree of a band layout, designed in float64.
///
/// Bands `[lo, hi)` are split at the crossover between bands `mid − 1` and `mid`
/// (`mid = (lo + hi)/2`) into an LR4 low part (two Butterworth low-passes, Q = 1/√2) and an LR4
/// high part. The low part then passes the second-order all-pass of every crossover inside the high
/// part, and vice versa, so that each part carries the all-pass of every crossover it did not pass
/// through; both parts are split again until single bands remain. Because an LR4 low-pass plus its
/// high-pass is exactly that all-pass, every band ends up as `A(z)·βⱼ(f)` with the same all-pass
/// `A` (the product of all crossover all-passes) and a real, non-negative `βⱼ` with `Σⱼ βⱼ = 1`:
/// the bands sum to `A` (flat magnitude) and add in phase at any frequency.
///
/// Realization (see `PersonalizationKernels`): the two halves of the layout have the same shape
/// (every tech level has an even band count), so after the first split they run side by side in
/// the lanes of one SIMD4 vector `(left low, right low, left high, right high)`, each lane with its
/// own coefficients. Every filter is a TPT state-variable filter: one SVF gives the Butterworth
/// low-pass and the all-pass `x − 2k·v1` at once, so a crossover costs two SVF updates
/// (`HP4 = AP − LP4`) and a compensation all-pass one.
struct CrossoverTreeDesign {
    let layout: MultibandLayout
    /// Bands per half (`bandCount / 2`): the number of band vectors.
    let halfCount: Int
    private(set) var ops: [TreeOp] = []
    /// For each coefficient set, the crossover index of lanes 0–1 and of lanes 2–3.
    private(set) var coefficientCrossovers: [(low: Int, high: Int)] = []
    private(set) var stateCount = 0
    private(set) var slotCount = 1
    /// The slot holding band vector `b` at the end of the program.
    private(set) var bandSlots: [Int]

    init(layout: MultibandLayout) {
        precondition(layout.bandCount % 2 == 0)
        self.layout = layout
        let h = layout.bandCount / 2
        halfCount = h
        bandSlots = Array(repeating: 0, count: h)
        // The root split at crossover h − 1 (between the halves), on lanes (x0, x1, x0, x1).
        ops.append(TreeOp(kind: .rootSplit, slot: 0, highSlot: 0, coefficients: addSet(h - 1, h - 1),
                          states: addStates(2), count: 1))
        // Lanes 0–1 (the low half) need the all-passes of the crossovers inside the high half
        // (h … 2h−2), lanes 2–3 those inside the low half (0 … h−2): the same count.
        if h > 1 {
            let first = coefficientCrossovers.count
            for j in 0..<(h - 1) { _ = addSet(h + j, j) }
            ops.append(TreeOp(kind: .allpass, slot: 0, highSlot: 0, coefficients: first, states: addStates(h - 1), count: h - 1))
        }
        buildSubtree(slot: 0, lo: 0, hi: h)
    }

    private mutating func addSet(_ low: Int, _ high: Int) -> Int {
        coefficientCrossovers.append((low, high))
        return coefficientCrossovers.count - 1
    }

    private mutating func addStates(_ count: Int) -> Int {
        defer { stateCount += count }
        return stateCount
    }

    /// Local band indices `[lo, hi)` of a half; lanes 0–1 use crossover `c`, lanes 2–3 `h + c`.
    private mutating func buildSubtree(slot: Int, lo: Int, hi: Int) {
        let h = halfCount
        if hi - lo == 1 {
            bandSlots[lo] = slot
            return
        }
        let mid = (lo + hi) / 2
        let highSlot = slotCount
        slotCount += 1
        ops.append(TreeOp(kind: .split, slot: slot, highSlot: highSlot, coefficients: addSet(mid - 1, h + mid - 1),
                          states: addStates(2), count: 1))
        // Low part: all-passes of the crossovers inside the high part, and vice versa.
        let lowCompensation = Array(mid..<(hi - 1)), highCompensation = Array(lo..<(mid - 1))
        for (target, crossovers) in [(slot, lowCompensation), (highSlot, highCompensation)] where !crossovers.isEmpty {
            let first = coefficientCrossovers.count
            for c in crossovers { _ = addSet(c, h + c) }
            ops.append(TreeOp(kind: .allpass, slot: target, highSlot: target, coefficients: first,
                              states: addStates(crossovers.count), count: crossovers.count))
        }
        buildSubtree(slot: slot, lo: lo, hi: mid)
        buildSubtree(slot: highSlot, lo: mid, hi: hi)
    }

    /// The highest crossover kept below Nyquist (0.45·fs) at low sample rates.
    static func crossoverFrequency(_ frequency: Double, sampleRate: Double) -> Double {
        min(frequency, 0.45 * sampleRate)
    }

    /// Butterworth SVF parameters (Q = 1/√2) of crossover `index`.
    func svf(crossover index: Int, sampleRate: Double) -> (g: Double, k: Double) {
        let fc = Self.crossoverFrequency(layout.crossovers[index], sampleRate: sampleRate)
        return (libmTan(Double.pi * fc / sampleRate), 2.0.squareRoot())
    }

    /// The float32 loop coefficients `(c11, c12, c22)` of every set, three SIMD4 per set.
    func coefficients(sampleRate: Double) -> [SIMD4<Float>] {
        var result: [SIMD4<Float>] = []
        for (low, high) in coefficientCrossovers {
            let a = loopCoefficients(svf(crossover: low, sampleRate: sampleRate))
            let b = loopCoefficients(svf(crossover: high, sampleRate: sampleRate))
            for i in 0..<3 { result.append(SIMD4(a[i], a[i], b[i], b[i])) }
        }
        return result
    }

    private func loopCoefficients(_ p: (g: Double, k: Double)) -> [Float] {
        let c = SVFLoopCoefficients(StateVariableParameters(g: p.g, k: p.k, m0: 0, m1: 0, m2: 1)).packed
        return [c[0], c[1], c[2]]
    }

    // MARK: - Analytic response (float64)

    /// The complex response of every band at `frequency` (band order), by running the program on
    /// complex lanes with the exact (bilinear) responses of its filters.
    func bandResponses(atFrequency frequency: Double, sampleRate: Double) -> [Complex] {
        let h = halfCount
        var slots = Array(repeating: [Complex](repeating: Complex(1, 0), count: 4), count: slotCount)
        func responses(_ set: Int) -> (lp: [Complex], ap: [Complex]) {
            let (low, high) = coefficientCrossovers[set]
            var lp: [Complex] = [], ap: [Complex] = []
            for lane in 0..<4 {
                let (g, k) = svf(crossover: lane < 2 ? low : high, sampleRate: sampleRate)
                // s = j·tan(ω/2)/g on the unit circle (bilinear transform).
                let s = Complex(0, libmTan(Double.pi * frequency / sampleRate) / g)
                let d = s * s + Complex(k, 0) * s + Complex(1, 0)
                lp.append(Complex(1, 0) / d)
                ap.append((s * s - Complex(k, 0) * s + Complex(1, 0)) / d)
            }
            return (lp, ap)
        }
        for op in ops {
            switch op.kind {
            case .rootSplit, .split:
                let (lp, ap) = responses(op.coefficients)
                let x = slots[op.slot]
                var low = x, high = x
                for lane in 0..<4 {
                    let lp4 = x[lane] * lp[lane] * lp[lane]
                    low[lane] = lp4
                    high[lane] = x[lane] * ap[lane] - lp4
                }
                if op.kind == .rootSplit {
                    slots[op.slot] = [low[0], low[1], high[2], high[3]]
                } else {
                    slots[op.slot] = low
                    slots[op.highSlot] = high
                }
            case .allpass:
                for j in 0..<op.count {
                    let (_, ap) = responses(op.coefficients + j)
                    for lane in 0..<4 { slots[op.slot][lane] = slots[op.slot][lane] * ap[lane] }
                }
            }
        }
        var bands = [Complex](repeating: Complex(0, 0), count: 2 * h)
        for b in 0..<h {
            bands[b] = slots[bandSlots[b]][0]
            bands[h + b] = slots[bandSlots[b]][2]
        }
        return bands
    }

    /// `β[k][j] = βⱼ(centre k)`: band `j`'s share (real, `Σⱼ = 1`) of a sine at band `k`'s centre.
    func centreShares(sampleRate: Double) -> [[Double]] {
        layout.bandCentres.map { f in
            let bands = bandResponses(atFrequency: f, sampleRate: sampleRate)
            let total = bands.reduce(Complex(0, 0), +)
            return bands.map { ($0 / total).re }
        }
    }
}

/// One step of the tree program, run over a segment of SIMD4 frames.
struct TreeOp {
    enum Kind: UInt8 {
        /// LR4 split of `slot` (lanes `x0, x1, x0, x1`) in place: lanes 0–1 low, 2–3 high.
        case rootSplit
        /// LR4 split of `slot`: low part in place, high part to `highSlot`.
        case split
        /// `count` chained all-passes on `slot`, in place.
        case allpass
    }
    var kind: Kind
    var slot: Int
    var highSlot: Int
    /// First coefficient set (three SIMD4 each).
    var coefficients: Int
    /// First state pair (`ic1`, `ic2`, two SIMD4 each).
    var states: Int
    var count: Int
}

/// A float64 complex number, for the analytic responses.
struct Complex {
    var re: Double
    var im: Double
    init(_ re: Double, _ im: Double) {
        self.re = re
        self.im = im
    }
    static func + (a: Complex, b: Complex) -> Complex { Complex(a.re + b.re, a.im + b.im) }
    static func - (a: Complex, b: Complex) -> Complex { Complex(a.re - b.re, a.im - b.im) }
    static func * (a: Complex, b: Complex) -> Complex {
        Complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
    }
    static func / (a: Complex, b: Complex) -> Complex {
        let d = b.re * b.re + b.im * b.im
        return Complex((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d)
    }
}
