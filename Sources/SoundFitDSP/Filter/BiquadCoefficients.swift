/// A digital biquad `H(z) = (b0 + b1·z⁻¹ + b2·z⁻²) / (1 + a1·z⁻¹ + a2·z⁻²)` in float64,
/// normalized so that `a0 = 1`.
///
/// This is the analytic reference of the filter stage: `rbj` designs it, `magnitude` evaluates
/// it, `processDouble` runs it as a float64 direct-form model. `BiquadFilter` realizes these
/// coefficients with a state-variable structure (see `StateVariableParameters`).
public struct BiquadCoefficients: Sendable, Equatable {
    public var b0: Double
    public var b1: Double
    public var b2: Double
    public var a1: Double
    public var a2: Double

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// The identity filter.
    public static var identity: BiquadCoefficients { BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0) }

    /// Coefficients exactly per Robert Bristow-Johnson's "Cookbook formulae for audio EQ biquad
    /// filter coefficients": `w0 = 2π·cutoff/sampleRate`, `alpha = sin(w0)/(2Q)` for every type
    /// (the shelves use this Q form of alpha too), `A = 10^(gain/40)` for peak and shelves.
    /// The band-pass is the "constant 0 dB peak gain" variant.
    ///
    /// No clamping: `cutoff` must lie in `(0, sampleRate/2)` and `q` be positive.
    /// Real-time safe (a few libm calls).
    public static func rbj(type: FilterType, cutoff: Double, q: Double, gain: Double,
                           sampleRate: Double) -> BiquadCoefficients {
        let w0 = 2 * Double.pi * cutoff / sampleRate
        let cosW0 = libmCos(w0)
        let sinW0 = libmSin(w0)
        let alpha = sinW0 / (2 * q)
        let b0, b1, b2, a0, a1, a2: Double
        switch type {
        case .lowpass:
            b0 = (1 - cosW0) / 2
            b1 = 1 - cosW0
            b2 = (1 - cosW0) / 2
            a0 = 1 + alpha
            a1 = -2 * cosW0
            a2 = 1 - alpha
        case .highpass:
            b0 = (1 + cosW0) / 2
            b1 = -(1 + cosW0)
            b2 = (1 + cosW0) / 2
            a0 = 1 + alpha
            a1 = -2 * cosW0
            a2 = 1 - alpha
        case .bandpass:
            b0 = alpha
            b1 = 0
            b2 = -alpha
            a0 = 1 + alpha
            a1 = -2 * cosW0
            a2 = 1 - alpha
        case .notch:
            b0 = 1
            b1 = -2 * cosW0
            b2 = 1
            a0 = 1 + alpha
            a1 = -2 * cosW0
            a2 = 1 - alpha
        case .allpass:
            b0 = 1 - alpha
            b1 = -2 * cosW0
            b2 = 1 + alpha
            a0 = 1 + alpha
            a1 = -2 * cosW0
            a2 = 1 - alpha
        case .peak:
            let a = libmPow(10, gain / 40)
            b0 = 1 + alpha * a
            b1 = -2 * cosW0
            b2 = 1 - alpha * a
            a0 = 1 + alpha / a
            a1 = -2 * cosW0
            a2 = 1 - alpha / a
        case .lowshelf:
            let a = libmPow(10, gain / 40)
            let twoSqrtAAlpha = 2 * libmSqrt(a) * alpha
            b0 = a * ((a + 1) - (a - 1) * cosW0 + twoSqrtAAlpha)
            b1 = 2 * a * ((a - 1) - (a + 1) * cosW0)
            b2 = a * ((a + 1) - (a - 1) * cosW0 - twoSqrtAAlpha)
            a0 = (a + 1) + (a - 1) * cosW0 + twoSqrtAAlpha
            a1 = -2 * ((a - 1) + (a + 1) * cosW0)
            a2 = (a + 1) + (a - 1) * cosW0 - twoSqrtAAlpha
        case .highshelf:
            let a = libmPow(10, gain / 40)
            let twoSqrtAAlpha = 2 * libmSqrt(a) * alpha
            b0 = a * ((a + 1) + (a - 1) * cosW0 + twoSqrtAAlpha)
            b1 = -2 * a * ((a - 1) + (a + 1) * cosW0)
            b2 = a * ((a + 1) + (a - 1) * cosW0 - twoSqrtAAlpha)
            a0 = (a + 1) - (a - 1) * cosW0 + twoSqrtAAlpha
            a1 = 2 * ((a - 1) - (a + 1) * cosW0)
            a2 = (a + 1) - (a - 1) * cosW0 - twoSqrtAAlpha
        }
        return BiquadCoefficients(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// True when both poles lie strictly inside the unit circle.
    public var isStable: Bool { abs(a2) < 1 && abs(a1) < 1 + a2 }

    /// `|H(e^{jω})|` at `frequency` Hz.
    public func magnitude(atFrequency frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = libmCos(w), s1 = libmSin(w)
        let c2 = libmCos(2 * w), s2 = libmSin(2 * w)
        // z⁻¹ = c1 - j·s1, z⁻² = c2 - j·s2
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }

    /// `20·log10 |H|` at `frequency` Hz.
    public func magnitudeDecibels(atFrequency frequency: Double, sampleRate: Double) -> Double {
        Decibels.decibels(magnitude(atFrequency: frequency, sampleRate: sampleRate))
    }

    /// Runs `input` through a float64 direct-form-I biquad starting from silence.
    /// A test and benchmark reference; allocates the result (not for the audio thread).
    public func processDouble(_ input: [Double]) -> [Double] {
        var output = [Double](repeating: 0, count: input.count)
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        for (n, x) in input.enumerated() {
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            output[n] = y
        }
        return output
    }

    /// `processDouble` on float32 samples (each converted exactly to float64).
    public func processDouble(_ input: [Float]) -> [Double] {
        processDouble(input.map(Double.init))
    }
}
