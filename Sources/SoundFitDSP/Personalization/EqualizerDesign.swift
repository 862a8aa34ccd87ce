/// The float64 design of the personalization processor's filters for one band layout and sample
/// rate: an analysis bank that measures each band's level, and a cascade equalizer that applies
/// the band gains (the structure of Välimäki & Liski's accurate cascade graphic equalizer).
///
/// **Analysis bank.** One second-order band-pass per band (a TPT SVF, unity gain at the band
/// centre, bandwidth = the band's share of the layout), only for the level detectors: the audio
/// path never passes through it, so its overlap costs no accuracy and no delay.
///
/// **Cascade.** The audio passes a broadband gain, one RBJ peaking filter ("bell") per band at the
/// band centre (bandwidth 1.5 × the band's share), and two Butterworth shelves that carry the
/// lowest band's gain down to DC and the highest band's up to Nyquist. At 0 dB every section is
/// the identity, so the processor is exactly transparent; otherwise the cascade is minimum phase,
/// which keeps the group delay at a fraction of a crossover tree's.
///
/// **Gains.** For band gains `d` (dB) the broadband gain is `g0 = (max d + min d)/2`, the shelves
/// get `d(first) − g0` and `d(last) − g0`, and the bells are solved so that the cascade's magnitude
/// at every band centre is `d − g0`. The magnitude of every section at every centre has the closed
/// form `term(u, s) = s/2 + 10·log10((u + (1−u)·t)/((1−u) + u·t))`, `t = 10^(s/20)`, with one
/// constant `u` per (section, centre) (`u = 0`: the section's full gain, `u = 1`: none), so
/// the solve is a fixed-point iteration `s ← s + M·(target − model(s))` with `M` the inverse of the
/// interaction matrix at a 12 dB prototype gain. The audio thread runs one step per control period
/// (so the bells track the band gains and converge within a few periods); `solve` runs it to
/// convergence.
struct EqualizerDesign {
    /// Bell bandwidth relative to the band's share of the layout (octaves between its neighbours'
    /// geometric means).
    static var bellBandwidthFactor: Double { 1.5 }
    /// The prototype gain (dB) of the interaction matrix.
    static var prototypeGain: Double { 12 }
    /// Section gains are kept within ±this (dB).
    static var sectionGainLimit: Double { 48 }
    /// Shelf corners lie half an octave outside the lowest and highest band centres.
    static var shelfCornerRatio: Double { 1.414_213_562_373_095_1 }
    /// Butterworth shelves: `k = 1/Q = √2`.
    static var shelfDamping: Double { 1.414_213_562_373_095_1 }

    let layout: MultibandLayout
    let sampleRate: Double
    /// Bell centres (band centres kept below 0.45·fs) and their Q.
    let bellCentres: [Double]
    let bellQ: [Double]
    /// Analysis band-pass Q per band.
    let analysisQ: [Double]
    let lowCorner: Double
    let highCorner: Double
    /// `u[k][j]`: bell j at band centre k. `uLow[k]`, `uHigh[k]`: the shelves at centre k.
    let u: [[Double]]
    let uLow: [Double]
    let uHigh: [Double]
    /// The inverse interaction matrix: bell gain change per dB of error at each centre.
    let interaction: [[Double]]

    init(layout: MultibandLayout, sampleRate: Double) {
        self.layout = layout
        self.sampleRate = sampleRate
        let nyquistLimit = 0.45 * sampleRate
        let centres = layout.bandCentres.map { min($0, nyquistLimit) }
        bellCentres = centres
        let shares = Self.shareOctaves(layout.bandCentres)
        bellQ = shares.map { Self.q(octaves: $0 * Self.bellBandwidthFactor) }
        analysisQ = shares.map { Self.q(octaves: $0) }
        lowCorner = centres[0] / Self.shelfCornerRatio
        highCorner = min(centres[centres.count - 1] * Self.shelfCornerRatio, nyquistLimit)
        let n = centres.count
        func w(_ f: Double, _ fc: Double) -> Double { libmTan(Double.pi * f / sampleRate) / libmTan(Double.pi * fc / sampleRate) }
        var u = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for k in 0..<n {
            for j in 0..<n {
                let x = w(centres[k], centres[j])
                let alpha = (1 - x * x) * (1 - x * x), beta = x * x / (bellQ[j] * bellQ[j])
                u[k][j] = alpha / (alpha + beta)
            }
        }
        self.u = u
        // Butterworth low shelf: |H|² = t·(γ + (1−γ)t)/((1−γ) + γt) with γ = w⁴/(1 + w⁴); the
        // high shelf is the mirror image (u = 1 − γ at its corner).
        uLow = centres.map { f in let x = w(f, centres[0] / Self.shelfCornerRatio); return x * x * x * x / (1 + x * x * x * x) }
        let highCorner = self.highCorner
        uHigh = centres.map { f in let x = w(f, highCorner); return 1 / (1 + x * x * x * x) }
        let p = Self.prototypeGain
        let matrix = (0..<n).map { k in (0..<n).map { j in Self.term(u[k][j], p) / p } }
        interaction = Self.inverse(matrix)
    }

    /// Octaves between the geometric means around each centre (the outer bands mirror their inner
    /// neighbour's spacing).
    static func shareOctaves(_ centres: [Double]) -> [Double] {
        let n = centres.count
        return (0..<n).map { k in
            let below = k > 0 ? centres[k - 1] : centres[k] * centres[k] / centres[k + 1]
            let above = k < n - 1 ? centres[k + 1] : centres[k] * centres[k] / centres[k - 1]
            return 0.5 * libmLog(above / below) / libmLog(2)
        }
    }

    /// Q of a second-order band-pass `octaves` wide.
    static func q(octaves: Double) -> Double {
        let r = libmPow(2, octaves)
        return libmSqrt(r) / (r - 1)
    }

    /// dB of a section with gain `s` dB at a frequency where its constant is `u`.
    static func term(_ u: Double, _ s: Double) -> Double {
        let t = libmPow(10, s / 20)
        return s / 2 + 10 * libmLog10((u + (1 - u) * t) / ((1 - u) + u * t))
    }

    // MARK: - Gains

    /// The gains of every section for one ear.
    struct Gains: Equatable {
        var broadband: Double
        var bells: [Double]
        var lowShelf: Double
        var highShelf: Double
    }

    /// The cascade's magnitude (dB) at each band centre, without the broadband gain.
    func model(_ gains: Gains) -> [Double] {
        (0..<bellCentres.count).map { k in
            var sum = Self.term(uLow[k], gains.lowShelf) + Self.term(uHigh[k], gains.highShelf)
            for j in gains.bells.indices { sum += Self.term(u[k][j], gains.bells[j]) }
            return sum
        }
    }

    /// The gains that give `bandGains` (dB) at the band centres, by `iterations` steps of the
    /// audio thread's iteration from zero bells.
    func solve(bandGains d: [Double], iterations: Int = 40) -> Gains {
        let g0 = (d.max()! + d.min()!) / 2
        let limit = Self.sectionGainLimit
        var gains = Gains(broadband: g0, bells: [Double](repeating: 0, count: d.count),
                          lowShelf: min(max(d[0] - g0, -limit), limit),
                          highShelf: min(max(d[d.count - 1] - g0, -limit), limit))
        for _ in 0..<iterations {
            let actual = model(gains)
            let error = d.indices.map { d[$0] - g0 - actual[$0] }
            for j in gains.bells.indices {
                var step = 0.0
                for k in error.indices { step += interaction[j][k] * error[k] }
                gains.bells[j] = min(max(gains.bells[j] + step, -limit), limit)
            }
        }
        return gains
    }

    // MARK: - Exact responses

    /// The analog prototype variable `j·w` of a filter at `fc` for frequency `f` (bilinear
    /// transform, prewarped at `fc`).
    private func s(_ f: Double, _ fc: Double) -> Complex {
        Complex(0, libmTan(Double.pi * f / sampleRate) / libmTan(Double.pi * fc / sampleRate))
    }

    /// The complex response of the whole cascade (broadband gain included) at `frequency`.
    func response(atFrequency frequency: Double, gains: Gains) -> Complex {
        let one = Complex(1, 0)
        var h = Complex(libmPow(10, gains.broadband / 20), 0)
        for (j, fc) in bellCentres.enumerated() {
            let a = libmPow(10, gains.bells[j] / 40), q = bellQ[j], x = s(frequency, fc)
            h = h * ((x * x + Complex(a / q, 0) * x + one) / (x * x + Complex(1 / (a * q), 0) * x + one))
        }
        func lowShelf(_ dB: Double, _ fc: Double) -> Complex {
            let a = libmPow(10, dB / 40), r = libmSqrt(a), k = Self.shelfDamping, x = s(frequency, fc)
            return Complex(a, 0) * (x * x + Complex(r * k, 0) * x + Complex(a, 0)) / (Complex(a, 0) * x * x + Complex(r * k, 0) * x + one)
        }
        // High shelf = its gain × the low shelf of the inverse gain (exact for RBJ shelves).
        h = h * lowShelf(gains.lowShelf, lowCorner)
        h = h * Complex(libmPow(10, gains.highShelf / 20), 0) * lowShelf(-gains.highShelf, highCorner)
        return h
    }

    /// Group delay (s) of the cascade at `frequency` for `gains`, from the analytic phase.
    func groupDelay(atFrequency frequency: Double, gains: Gains) -> Double {
        func phase(_ f: Double) -> Double {
            let h = response(atFrequency: f, gains: gains)
            return libmAtan2(h.im, h.re)
        }
        let delta = 0.5
        var difference = phase(frequency + delta) - phase(frequency - delta)
        while difference > Double.pi { difference -= 2 * Double.pi }
        while difference < -Double.pi { difference += 2 * Double.pi }
        return -difference / (2 * Double.pi * 2 * delta)
    }

    /// The magnitude of band `band`'s analysis band-pass at `frequency` (1 at its centre).
    func analysisMagnitude(band: Int, atFrequency frequency: Double) -> Double {
        let x = s(frequency, bellCentres[band]).im, q = analysisQ[band]
        let y = q * (x - 1 / x)
        return 1 / libmSqrt(1 + y * y)
    }

    // MARK: - SVF parameters

    /// The SVF of bell `j` at gain `s` dB (`y = x + m1·v1`).
    func bell(_ j: Int, gain: Double) -> StateVariableParameters {
        let a = libmPow(10, gain / 40), k = 1 / (bellQ[j] * a)
        return StateVariableParameters(g: libmTan(Double.pi * bellCentres[j] / sampleRate), k: k, m0: 1, m1: k * (a * a - 1), m2: 0)
    }

    /// The SVF of a Butterworth low shelf at `corner` with gain `s` dB (Simper's form).
    func lowShelf(corner: Double, gain: Double) -> StateVariableParameters {
        let a = libmPow(10, gain / 40), k = Self.shelfDamping
        return StateVariableParameters(g: libmTan(Double.pi * corner / sampleRate) / libmSqrt(a), k: k, m0: 1,
                                       m1: k * (a - 1), m2: a * a - 1)
    }

    /// The analysis band-pass of band `j` (`y = k·v1`, unity at the centre).
    func analysis(_ j: Int) -> StateVariableParameters {
        let k = 1 / analysisQ[j]
        return StateVariableParameters(g: libmTan(Double.pi * bellCentres[j] / sampleRate), k: k, m0: 0, m1: k, m2: 0)
    }

    /// Gauss–Jordan inverse with partial pivoting (the interaction matrix is well conditioned).
    static func inverse(_ a: [[Double]]) -> [[Double]] {
        let n = a.count
        var m = a
        var inv = (0..<n).map { i in (0..<n).map { $0 == i ? 1.0 : 0.0 } }
        for col in 0..<n {
            let pivot = (col..<n).max { abs(m[$0][col]) < abs(m[$1][col]) }!
            m.swapAt(col, pivot)
            inv.swapAt(col, pivot)
            let p = m[col][col]
            for c in 0..<n {
                m[col][c] /= p
                inv[col][c] /= p
            }
            for row in 0..<n where row != col {
                let f = m[row][col]
                guard f != 0 else { continue }
                for c in 0..<n {
                    m[row][c] -= f * m[col][c]
                    inv[row][c] -= f * inv[col][c]
                }
            }
        }
        return inv
    }
}

/// A float64 complex number, for the analytic responses.
struct Complex {
    var re: Double
    var im: Double
    init(_ re: Double, _ im: Double) {
        self.re = re
        self.im = im
    }
    var magnitude: Double { libmSqrt(re * re + im * im) }
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
