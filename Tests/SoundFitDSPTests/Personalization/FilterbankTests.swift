import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("Personalization filterbank")
struct FilterbankTests {
    static let fs = 48000.0

    /// The float32 bands, summed at unity gain, measured with a steady multi-tone from 50 Hz to
    /// 16 kHz: flat within ±0.1 dB. Control: the sum of the bands' magnitudes without the phase
    /// compensation (|B₀| + |B₁| … is what naive band-passes would need) is not what we measure —
    /// a band-pass sum that ignores phase misses by far more.
    @Test("bands sum flat within ±0.1 dB from 50 Hz to 16 kHz", arguments: [1, 2, 3, 4])
    func sumIsFlat(techLevel: Int) {
        let bank = MultibandFilterbank(techLevel: techLevel, sampleRate: Self.fs)!
        let frequencies = responseFrequencies(sampleRate: Self.fs, cutoffs: bank.crossovers.map(Float.init))
            .filter { $0 >= 50 && $0 <= 16000 }
        let probe = ResponseProbe(sampleRate: Self.fs, frequencies: frequencies, seed: UInt64(techLevel))
        let bands = bank.bands(of: probe.input)
        let sum = (0..<probe.frameCount).map { i in bands.reduce(Float(0)) { $0 + $1[i] } }
        let response = probe.responseDecibels(of: sum)
        let worst = response.map(abs).max()!
        report("tech level \(techLevel): \(bands.count) bands, \(frequencies.count) tones 50 Hz…16 kHz, sum within ±\(String(format: "%.4f", worst)) dB")
        #expect(worst <= 0.1)
        // Each band on its own is far from flat (the test can fail): its largest deviation.
        let single = probe.responseDecibels(of: bands[bands.count / 2]).map(abs).max()!
        #expect(single > 10)
    }

    /// Every band and the sum of the float32 bank against the independent float64 model of the
    /// tree (cookbook direct-form biquads in float64), on a multi-tone with a tone at every band
    /// centre and crossover so every band carries signal: residual ≤ −90 dB relative to each
    /// signal. Control: the naive float32 direct form of the same tree misses at the low crossover.
    @Test("float32 bands against a float64 model ≤ −90 dB", arguments: [1, 2, 3, 4])
    func precision(techLevel: Int) {
        let bank = MultibandFilterbank(techLevel: techLevel, sampleRate: Self.fs)!
        let frequencies = (bank.layout.bandCentres + bank.crossovers).sorted()
        let input = SignalGenerator.multiTone(frequencies: frequencies, amplitude: 0.05, sampleRate: Self.fs,
                                              count: 48000, seed: 7)
        let bands = bank.bands(of: input)
        let model = CrossoverTreeReference.bands(of: input, crossovers: bank.crossovers, sampleRate: Self.fs)
        var worst = -Double.infinity
        for (band, reference) in zip(bands, model) {
            worst = max(worst, Measurement.residualDecibels(band, reference: reference))
        }
        let sum = (0..<input.count).map { i in bands.reduce(Float(0)) { $0 + $1[i] } }
        let modelSum = (0..<input.count).map { i in model.reduce(0.0) { $0 + $1[i] } }
        let sumResidual = Measurement.residualDecibels(sum, reference: modelSum)
        report("tech level \(techLevel): worst band residual \(String(format: "%.1f", worst)) dB, sum \(String(format: "%.1f", sumResidual)) dB")
        #expect(worst <= -90)
        #expect(sumResidual <= -90)
    }

    /// The group delay of the bank (the all-pass sum) from the float32 impulse response agrees
    /// with the analytic value; the numbers themselves are reported in BENCHMARKS.md.
    @Test("group delay from the impulse response matches the design", arguments: [1, 2, 3, 4])
    func groupDelay(techLevel: Int) {
        let bank = MultibandFilterbank(techLevel: techLevel, sampleRate: Self.fs)!
        var impulse = [Float](repeating: 0, count: 16384)
        impulse[0] = 1
        let bands = bank.bands(of: impulse)
        let h = (0..<impulse.count).map { i in bands.reduce(0.0) { $0 + Double($1[i]) } }
        func phase(_ f: Double) -> Double {
            let w = 2 * Double.pi * f / Self.fs
            var re = 0.0, im = 0.0
            for (n, x) in h.enumerated() { re += x * cos(w * Double(n)); im -= x * sin(w * Double(n)) }
            return atan2(im, re)
        }
        var line: [String] = []
        for f in [1000.0, 2000, 4000] {
            var d = phase(f + 0.5) - phase(f - 0.5)
            while d > .pi { d -= 2 * .pi }
            while d < -.pi { d += 2 * .pi }
            let measured = -d / (2 * .pi)
            let designed = bank.groupDelay(atFrequency: f)
            line.append("\(Int(f)) Hz \(String(format: "%.3f", measured * 1000)) ms")
            #expect(abs(measured - designed) <= 0.01e-3)
        }
        report("tech level \(techLevel) group delay: " + line.joined(separator: ", "))
    }
}
