/// The personalization processor's filters for one tech level on their own, for tests,
/// benchmarks and measurements: the cascade's gains for given band gains (float64, solved as the
/// audio thread solves them, to convergence), its exact response and group delay, and the float32
/// cascade itself (same coefficients and kernels as the processor) at fixed band gains.
/// Allocates; not for the audio thread.
public struct MultibandEqualizer: Sendable {
    public let layout: MultibandLayout
    public let sampleRate: Double

    private let design: EqualizerDesign

    public init?(techLevel: Int, sampleRate: Double) {
        guard let layout = MultibandLayout(techLevel: techLevel), sampleRate.isFinite, sampleRate >= 8000 else { return nil }
        self.layout = layout
        self.sampleRate = sampleRate
        design = EqualizerDesign(layout: layout, sampleRate: sampleRate)
    }

    /// The gains (dB) of the cascade's sections for band gains `bandGains` (dB, band order).
    public struct SectionGains: Sendable, Equatable {
        public var broadband: Double
        public var bells: [Double]
        public var lowShelf: Double
        public var highShelf: Double
    }

    public func sectionGains(forBandGains bandGains: [Double]) -> SectionGains {
        precondition(bandGains.count == layout.bandCount)
        let gains = design.solve(bandGains: bandGains)
        return SectionGains(broadband: gains.broadband, bells: gains.bells, lowShelf: gains.lowShelf, highShelf: gains.highShelf)
    }

    /// The bell centres, bell Qs, analysis Qs and shelf corners (Hz), for the record.
    public var sections: (bellCentres: [Double], bellQ: [Double], analysisQ: [Double], lowCorner: Double, highCorner: Double) {
        let d = design
        return (d.bellCentres, d.bellQ, d.analysisQ, d.lowCorner, d.highCorner)
    }

    /// The cascade's exact magnitude (dB) at `frequency` for band gains `bandGains`.
    public func responseDecibels(atFrequency frequency: Double, bandGains: [Double]) -> Double {
        let d = design
        return 20 * libmLog10(d.response(atFrequency: frequency, gains: d.solve(bandGains: bandGains)).magnitude)
    }

    /// The cascade's exact magnitude (dB) at each of `frequencies` for band gains `bandGains`,
    /// with the section gains solved once.
    public func responseDecibels(atFrequencies frequencies: [Double], bandGains: [Double]) -> [Double] {
        precondition(bandGains.count == layout.bandCount)
        let d = design
        let gains = d.solve(bandGains: bandGains)
        return frequencies.map { 20 * libmLog10(d.response(atFrequency: $0, gains: gains).magnitude) }
    }

    /// The cascade's group delay (s) at `frequency` for band gains `bandGains`.
    public func groupDelay(atFrequency frequency: Double, bandGains: [Double]) -> Double {
        let d = design
        return d.groupDelay(atFrequency: frequency, gains: d.solve(bandGains: bandGains))
    }

    /// The magnitude of band `band`'s analysis band-pass at `frequency`.
    public func analysisMagnitude(band: Int, atFrequency frequency: Double) -> Double {
        design.analysisMagnitude(band: band, atFrequency: frequency)
    }

    /// `input` through the float32 cascade kernel (from silent states) at fixed band gains, as the
    /// processor runs it once its gains have settled: left-ear lanes, 32-sample segments. The
    /// coefficients come from the float64 design (`EqualizerDesign.bell`/`lowShelf`), not from the
    /// processor's float32 control-rate code (`fastExp2`), so 0 dB is the identity bit for bit
    /// here and to about −131 dB there.
    public func process(_ input: [Float], bandGains: [Double]) -> [Float] {
        let d = design
        let gains = d.solve(bandGains: bandGains)
        let h = layout.bandCount / 2
        var ramps = [SectionRamp](repeating: SectionRamp(), count: h + 1)
        func lanes(_ q: Int, _ low: StateVariableParameters, _ high: StateVariableParameters) -> SectionRamp {
            let a = SVFLoopCoefficients(low).packed, b = SVFLoopCoefficients(high).packed
            func v(_ i: Int) -> SIMD4<Float> { SIMD4(a[i], a[i], b[i], b[i]) }
            var ramp = SectionRamp(vector: q)
            ramp.c11 = v(0)
            ramp.c12 = v(1)
            ramp.c22 = v(2)
            ramp.h1 = v(4)
            ramp.h2 = v(5)
            return ramp
        }
        for σ in 0..<h {
            ramps[σ] = lanes(σ, d.bell(2 * σ, gain: gains.bells[2 * σ]), d.bell(2 * σ + 1, gain: gains.bells[2 * σ + 1]))
        }
        ramps[h] = lanes(h, d.lowShelf(corner: d.lowCorner, gain: gains.lowShelf),
                         d.lowShelf(corner: d.highCorner, gain: -gains.highShelf))
        let broadband = Float(libmPow(10, (gains.broadband + gains.highShelf) / 20))
        var states = [SIMD4<Float>](repeating: SIMD4(), count: 3 * (h + 1))
        var slots = [SIMD4<Float>](repeating: SIMD4(), count: PersonalizationImage.controlPeriod)
        var output = [Float](repeating: 0, count: input.count)
        var start = 0
        while start < input.count {
            let count = min(PersonalizationImage.controlPeriod, input.count - start)
            for i in 0..<count { slots[i] = SIMD4(input[start + i], 0, input[start + i], 0) }
            slots.withUnsafeMutableBufferPointer { slot in
                states.withUnsafeMutableBufferPointer { state in
                    ramps.withUnsafeMutableBufferPointer { ramp in
                        PersonalizationKernels.cascade(slot.baseAddress!, count: count, vectors: h + 1,
                                                       ramps: ramp.baseAddress!, states: state.baseAddress!)
                    }
                }
            }
            for i in 0..<count { output[start + i] = broadband * slots[i][2] }
            start += count
        }
        return output
    }
}
