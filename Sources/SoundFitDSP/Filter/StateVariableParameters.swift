/// A biquad expressed as Andrew Simper's trapezoidal (TPT) state-variable filter:
/// `g` (prewarped frequency), `k` (damping, 1/Q) and the output mix `y = m0·x + m1·band + m2·low`.
///
/// The conversion from `BiquadCoefficients` is exact: the digital biquad is mapped back through
/// the bilinear transform (`s = (1 - z⁻¹)/(1 + z⁻¹)`) to its analog pre-image
/// `(N2·s² + N1·s + N0)/(D2·s² + D1·s + D0)`, normalized to `s' = s/g`, which is what the TPT
/// SVF realizes. So every cookbook type is reproduced exactly, and the structure keeps float32
/// accurate at low cutoffs (its states are integrator outputs, not a difference of large terms).
public struct StateVariableParameters: Sendable, Equatable {
    public var g: Double
    public var k: Double
    public var m0: Double
    public var m1: Double
    public var m2: Double

    public init(g: Double, k: Double, m0: Double, m1: Double, m2: Double) {
        self.g = g
        self.k = k
        self.m0 = m0
        self.m1 = m1
        self.m2 = m2
    }

    /// The exact SVF realization of a stable biquad. Real-time safe.
    public init(_ c: BiquadCoefficients) {
        let d2 = 1 - c.a1 + c.a2
        let d1 = 2 * (1 - c.a2)
        let d0 = 1 + c.a1 + c.a2
        let n2 = c.b0 - c.b1 + c.b2
        let n1 = 2 * (c.b0 - c.b2)
        let n0 = c.b0 + c.b1 + c.b2
        let g = libmSqrt(d0 / d2)
        let k = d1 * g / d0
        let p2 = n2 / d2
        let p1 = n1 * g / d0
        let p0 = n0 / d0
        self.init(g: g, k: k, m0: p2, m1: p1 - k * p2, m2: p0 - p2)
    }

    /// `(1 - amount)·self + amount·other`, component-wise. Any blend of two valid SVFs
    /// (`g > 0`, `k > 0`) is a valid, stable SVF, which is why type changes morph here.
    @inline(__always)
    public func interpolated(to other: StateVariableParameters, amount: Double) -> StateVariableParameters {
        StateVariableParameters(
            g: g + (other.g - g) * amount,
            k: k + (other.k - k) * amount,
            m0: m0 + (other.m0 - m0) * amount,
            m1: m1 + (other.m1 - m1) * amount,
            m2: m2 + (other.m2 - m2) * amount)
    }

    /// Back to direct-form coefficients (the bilinear transform of the analog prototype).
    public var biquadCoefficients: BiquadCoefficients {
        // Analog: H(s') = (m0·s'² + (m0·k + m1)·s' + (m0 + m2)) / (s'² + k·s' + 1), s' = s/g.
        let e2 = m0 / (g * g), e1 = (m0 * k + m1) / g, e0 = m0 + m2
        let f2 = 1 / (g * g), f1 = k / g, f0 = 1.0
        // s = (1 - z⁻¹)/(1 + z⁻¹): multiply through by (1 + z⁻¹)².
        let a0 = f2 + f1 + f0
        return BiquadCoefficients(
            b0: (e2 + e1 + e0) / a0, b1: 2 * (e0 - e2) / a0, b2: (e2 - e1 + e0) / a0,
            a1: 2 * (f0 - f2) / a0, a2: (f2 - f1 + f0) / a0)
    }
}

/// The float32 per-sample coefficients of the SVF loop, packed for linear interpolation:
/// `[c11, c12, c22, m0, h1, h2, 0, 0]`.
///
/// With `a1 = 1/(1 + g(g + k))`, `a2 = g·a1`, `a3 = g·a2` (Simper's names), one sample is
/// `ic1' = ic1 + c11·ic1 + c12·(x - ic2)`, `ic2' = ic2 - c22·ic2 + c12·ic1 + c22·x` with
/// `c11 = 2(a1 - 1)`, `c12 = 2·a2`, `c22 = 2·a3`, and the output
/// `y = m0·x + h1·(ic1 + ic1') + h2·(ic2 + ic2')` with `h1 = m1/2`, `h2 = m2/2`
/// (`(ic + ic')/2` are Simper's `v1` and `v2`). The increments stay small numbers stored in full
/// float precision instead of coefficients close to 1, which keeps low cutoffs accurate.
struct SVFLoopCoefficients: Equatable {
    var packed: SIMD8<Float>

    init(packed: SIMD8<Float>) { self.packed = packed }

    init(_ p: StateVariableParameters) {
        let gk = p.g * (p.g + p.k)
        let a1 = 1 / (1 + gk)
        let a2 = p.g * a1
        let a3 = p.g * a2
        packed = SIMD8<Float>(
            Float(-2 * gk * a1), Float(2 * a2), Float(2 * a3), Float(p.m0),
            Float(p.m1 / 2), Float(p.m2 / 2), 0, 0)
    }
}

/// The SVF advanced by two samples at once, for the steady loop (its recursion then spans two
/// samples per multiply-add chain, halving the latency bound at low channel counts).
///
/// One step is `s' = A·s + B·x` with `A = I + D`, `D = [[c11, -c12], [c12, -c22]]`,
/// `B = [c12, c22]`. Two steps: `s'' = s + E·s + F·x0 + B·x1` with `E = A² - I = 2D + D²` and
/// `F = A·B = B + D·B`. Every entry of `E`, `F` and `B` is a small increment computed in float64,
/// so the update keeps the precise `state + small increments` form.
struct SVFTwoStepCoefficients: Equatable {
    /// `[e11, e12, e21, e22, f1, f2, b1, b2]`.
    var packed: SIMD8<Float>

    init(_ p: StateVariableParameters) {
        let gk = p.g * (p.g + p.k)
        let a1 = 1 / (1 + gk)
        let a2 = p.g * a1
        let a3 = p.g * a2
        let c11 = -2 * gk * a1, c12 = 2 * a2, c22 = 2 * a3
        // D = [[d11, d12], [d21, d22]]
        let d11 = c11, d12 = -c12, d21 = c12, d22 = -c22
        let e11 = 2 * d11 + d11 * d11 + d12 * d21
        let e12 = 2 * d12 + d11 * d12 + d12 * d22
        let e21 = 2 * d21 + d21 * d11 + d22 * d21
        let e22 = 2 * d22 + d21 * d12 + d22 * d22
        let f1 = c12 + d11 * c12 + d12 * c22
        let f2 = c22 + d21 * c12 + d22 * c22
        packed = SIMD8<Float>(Float(e11), Float(e12), Float(e21), Float(e22), Float(f1), Float(f2), Float(c12), Float(c22))
    }
}
