import Foundation

/// An independent float64 reference of the Audio EQ Cookbook biquads, written for the tests
/// straight from Robert Bristow-Johnson's formulas (it does not use SoundFitDSP), with the
/// analytic response from evaluating H(z) on the unit circle and a direct-form-I model.
public struct CookbookBiquad: Sendable {
    /// `b0, b1, b2, a0, a1, a2` as the cookbook writes them (not normalized).
    public let b: (Double, Double, Double)
    public let a: (Double, Double, Double)

    /// Cookbook type names: `LPF`, `HPF`, `BPF` (constant 0 dB peak gain), `notch`, `APF`,
    /// `peakingEQ`, `lowShelf`, `highShelf`.
    public enum Kind: String, CaseIterable, Sendable {
        case lpf, hpf, bpf, notch, apf, peakingEQ, lowShelf, highShelf
    }

    public init(kind: Kind, f0: Double, q: Double, dbGain: Double, fs: Double) {
        let A = pow(10, dbGain / 40)
        let w0 = 2 * Double.pi * f0 / fs
        let cw = cos(w0), sw = sin(w0)
        let alpha = sw / (2 * q)
        switch kind {
        case .lpf:
            b = ((1 - cw) / 2, 1 - cw, (1 - cw) / 2); a = (1 + alpha, -2 * cw, 1 - alpha)
        case .hpf:
            b = ((1 + cw) / 2, -(1 + cw), (1 + cw) / 2); a = (1 + alpha, -2 * cw, 1 - alpha)
        case .bpf:
            b = (alpha, 0, -alpha); a = (1 + alpha, -2 * cw, 1 - alpha)
        case .notch:
            b = (1, -2 * cw, 1); a = (1 + alpha, -2 * cw, 1 - alpha)
        case .apf:
            b = (1 - alpha, -2 * cw, 1 + alpha); a = (1 + alpha, -2 * cw, 1 - alpha)
        case .peakingEQ:
            b = (1 + alpha * A, -2 * cw, 1 - alpha * A); a = (1 + alpha / A, -2 * cw, 1 - alpha / A)
        case .lowShelf:
            let s = 2 * sqrt(A) * alpha
            b = (A * ((A + 1) - (A - 1) * cw + s), 2 * A * ((A - 1) - (A + 1) * cw), A * ((A + 1) - (A - 1) * cw - s))
            a = ((A + 1) + (A - 1) * cw + s, -2 * ((A - 1) + (A + 1) * cw), (A + 1) + (A - 1) * cw - s)
        case .highShelf:
            let s = 2 * sqrt(A) * alpha
            b = (A * ((A + 1) + (A - 1) * cw + s), -2 * A * ((A - 1) + (A + 1) * cw), A * ((A + 1) + (A - 1) * cw - s))
            a = ((A + 1) - (A - 1) * cw + s, 2 * ((A - 1) - (A + 1) * cw), (A + 1) - (A - 1) * cw - s)
        }
    }

    /// |H(e^{jω})| by complex evaluation of the unnormalized polynomials.
    public func magnitude(atFrequency f: Double, fs: Double) -> Double {
        let w = 2 * Double.pi * f / fs
        // Evaluate p(z⁻¹) = c0 + c1·z⁻¹ + c2·z⁻² at z⁻¹ = e^{-jω}.
        func eval(_ c: (Double, Double, Double)) -> (Double, Double) {
            (c.0 + c.1 * cos(w) + c.2 * cos(2 * w), -(c.1 * sin(w) + c.2 * sin(2 * w)))
        }
        let (nr, ni) = eval(b), (dr, di) = eval(a)
        return sqrt((nr * nr + ni * ni) / (dr * dr + di * di))
    }

    public func magnitudeDecibels(atFrequency f: Double, fs: Double) -> Double {
        20 * log10(magnitude(atFrequency: f, fs: fs))
    }

    /// Normalized coefficients `(b0, b1, b2, a1, a2) / a0`.
    public var normalized: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (b.0 / a.0, b.1 / a.0, b.2 / a.0, a.1 / a.0, a.2 / a.0)
    }

    /// Direct form I in float64 from silence.
    public func process(_ input: [Float]) -> [Double] {
        let c = normalized
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        return input.map { sample in
            let x = Double(sample)
            let y = c.b0 * x + c.b1 * x1 + c.b2 * x2 - c.a1 * y1 - c.a2 * y2
            x2 = x1; x1 = x; y2 = y1; y1 = y
            return y
        }
    }

    /// Direct form I in float32 from silence: the naive implementation, to show what the
    /// precision tests catch.
    public func processFloat32(_ input: [Float]) -> [Float] {
        let c = normalized
        let b0 = Float(c.b0), b1 = Float(c.b1), b2 = Float(c.b2), a1 = Float(c.a1), a2 = Float(c.a2)
        var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0
        return input.map { x in
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1; x1 = x; y2 = y1; y1 = y
            return y
        }
    }
}
