import Foundation

/// Signal measurements shared by the DSP unit tests and the JACK integration tests
/// (null tests, tone levels by DFT, magnitude responses).
public enum Measurement {
    /// Root-mean-square of `samples`.
    public static func rms<C: Collection>(_ samples: C) -> Double where C.Element == Float {
        guard !samples.isEmpty else { return 0 }
        var sum = 0.0
        for s in samples { sum += Double(s) * Double(s) }
        return (sum / Double(samples.count)).squareRoot()
    }

    /// 20·log10(ratio); −inf for zero.
    public static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Amplitude of the sinusoid at `frequency` in `samples`, by a least-squares fit of
    /// sine and cosine (a Goertzel on an arbitrary window length). Best over a whole number
    /// of periods; accurate to ~1e-6 relative for windows of many periods.
    public static func toneAmplitude(_ samples: [Float], frequency: Double, sampleRate: Double) -> Double {
        toneComponents(samples, frequency: frequency, sampleRate: sampleRate).amplitude
    }

    /// Amplitude and phase (radians, of cos) of the sinusoid at `frequency`.
    public static func toneComponents(_ samples: [Float], frequency: Double, sampleRate: Double)
        -> (amplitude: Double, phase: Double)
    {
        let w = 2 * Double.pi * frequency / sampleRate
        var ss = 0.0, cc = 0.0, sc = 0.0, ys = 0.0, yc = 0.0
        for (n, x) in samples.enumerated() {
            let s = sin(w * Double(n)), c = cos(w * Double(n))
            ss += s * s; cc += c * c; sc += s * c
            ys += Double(x) * s; yc += Double(x) * c
        }
        // Solve [ss sc; sc cc] [a; b] = [ys; yc] for x ≈ a·sin + b·cos.
        let det = ss * cc - sc * sc
        guard det != 0 else { return (0, 0) }
        let a = (ys * cc - yc * sc) / det
        let b = (yc * ss - ys * sc) / det
        return ((a * a + b * b).squareRoot(), atan2(-a, b))
    }

    /// A sine of `amplitude` at `frequency`, `count` samples long, starting at phase 0.
    public static func sine(frequency: Double, amplitude: Double = 1, sampleRate: Double, count: Int,
                            startSample: Int = 0) -> [Float] {
        let w = 2 * Double.pi * frequency / sampleRate
        return (0..<count).map { Float(amplitude * sin(w * Double($0 + startSample))) }
    }

    /// Residual of `signal` against `reference` relative to the reference, in dB.
    public static func residualDecibels(_ signal: [Float], reference: [Double]) -> Double {
        precondition(signal.count == reference.count)
        var err = 0.0, ref = 0.0
        for (s, r) in zip(signal, reference) {
            err += (Double(s) - r) * (Double(s) - r)
            ref += r * r
        }
        return 10 * log10(err / ref)
    }
}
