/// The crossover tree of a tech level on its own, on arrays: the float32 band signals exactly as
/// the personalization processor computes them (same program, coefficients and kernels), for
/// tests, benchmarks and measurements. Allocates; not for the audio thread.
public struct MultibandFilterbank: Sendable {
    public let layout: MultibandLayout
    public let sampleRate: Double

    public init?(techLevel: Int, sampleRate: Double) {
        guard let layout = MultibandLayout(techLevel: techLevel), sampleRate.isFinite, sampleRate >= 8000 else { return nil }
        self.layout = layout
        self.sampleRate = sampleRate
    }

    /// The crossover frequencies actually used (below 0.45·fs).
    public var crossovers: [Double] {
        layout.crossovers.map { CrossoverTreeDesign.crossoverFrequency($0, sampleRate: sampleRate) }
    }

    /// The band signals of `input` (band order), from silent states. Their sum is the all-pass
    /// `A(z)` applied to `input`.
    public func bands(of input: [Float]) -> [[Float]] {
        let design = CrossoverTreeDesign(layout: layout)
        let h = design.halfCount
        let period = PersonalizationImage.controlPeriod
        let coefficients = design.coefficients(sampleRate: sampleRate)
        var states = [SIMD4<Float>](repeating: SIMD4(), count: 2 * design.stateCount)
        var slots = [SIMD4<Float>](repeating: SIMD4(), count: design.slotCount * period)
        var result = [[Float]](repeating: [Float](repeating: 0, count: input.count), count: layout.bandCount)
        var start = 0
        while start < input.count {
            let count = min(period, input.count - start)
            coefficients.withUnsafeBufferPointer { c in
                states.withUnsafeMutableBufferPointer { s in
                    slots.withUnsafeMutableBufferPointer { slot in
                        let base = slot.baseAddress!
                        for i in 0..<count { base[i] = SIMD4(input[start + i], 0, input[start + i], 0) }
                        for op in design.ops {
                            let p = base + op.slot * period
                            let cs = c.baseAddress! + 3 * op.coefficients, st = s.baseAddress! + 2 * op.states
                            switch op.kind {
                            case .rootSplit:
                                PersonalizationKernels.split(p, high: p, count: count, coefficients: cs, states: st, root: true)
                            case .split:
                                PersonalizationKernels.split(p, high: base + op.highSlot * period, count: count,
                                                             coefficients: cs, states: st, root: false)
                            case .allpass:
                                PersonalizationKernels.allpass(p, count: count, chain: op.count, coefficients: cs, states: st)
                            }
                        }
                        for b in 0..<h {
                            let p = base + design.bandSlots[b] * period
                            for i in 0..<count {
                                result[b][start + i] = p[i][0]
                                result[h + b][start + i] = p[i][2]
                            }
                        }
                    }
                }
            }
            start += count
        }
        return result
    }

    /// The analytic (float64) complex response of every band at `frequency`: `(re, im)` pairs.
    public func bandResponses(atFrequency frequency: Double) -> [(re: Double, im: Double)] {
        CrossoverTreeDesign(layout: layout).bandResponses(atFrequency: frequency, sampleRate: sampleRate).map { ($0.re, $0.im) }
    }

    /// `β[k][j]`: band j's real share of a sine at band k's centre (rows sum to 1).
    public var centreShares: [[Double]] { CrossoverTreeDesign(layout: layout).centreShares(sampleRate: sampleRate) }

    /// Group delay (s) of the bank's sum (the all-pass) at `frequency`, from the analytic phase.
    public func groupDelay(atFrequency frequency: Double) -> Double {
        func phase(_ f: Double) -> Double {
            let bands = bandResponses(atFrequency: f)
            return libmAtan2(bands.reduce(0) { $0 + $1.im }, bands.reduce(0) { $0 + $1.re })
        }
        let delta = 0.5
        var difference = phase(frequency + delta) - phase(frequency - delta)
        while difference > Double.pi { difference -= 2 * Double.pi }
        while difference < -Double.pi { difference += 2 * Double.pi }
        return -difference / (2 * Double.pi * 2 * delta)
    }
}
