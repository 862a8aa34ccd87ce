import SoundFitModel

/// The design of one band's level detector: the constants that make a preset's `attack`/`release`
/// (ms) the attack and release times ANSI S3.22 / IEC 60118-2 measure, for that band's gain law.
///
/// **The detector is linear in power.** The band-pass output `y` is squared and passed through
/// linear smoothers only: the per-sample pre-smoother (two one-poles, `BandLaw.preDecay`) and, at
/// the control rate, a chain of `order` equal one-poles (coefficient `coefficient` per control
/// period) whose first and last outputs are mixed, `w·s₁ + (1 − w)·s_order`
/// (`firstStageWeight` = w). Every part has unity gain at DC and the weights sum to 1, so for any
/// stationary signal the detector's mean is the signal's mean band power: speech-shaped noise and
/// a tone of the same band power read the same level, without the bias an attack/release smoother
/// has (one that follows rises faster than falls reads noise 0.7–1.3 dB above its mean power; see
/// docs/Personalization.md). The band reads `10·log10` of that power once per control period.
///
/// **Times.** ANSI S3.22 (IEC 60118-2 is similar; hearing.md "Verifying a fitting"): a tone at
/// the band centre steps 55 → 90 dB SPL and back; the attack time is the time until the output is
/// within 3 dB of its new steady value, the release time until it is within 4 dB after the step
/// down. A linear detector's step response `u(t)` is the same up and down, so both times follow
/// from it and the band's static law `g(L)`: attack when `g(L↑(t)) − g(90) ≤ 3`, release when
/// `g(55) − g(L↓(t)) ≤ 4`, with `L↑(t) = 10·log10(P55 + (P90 − P55)·u(t))` and `L↓` likewise with
/// `1 − u`. In power a step down takes far longer to read than a step up (35 dB of decay against
/// a rise to within a few dB), so one one-pole (`order` 1) measures a release 16–40 times its
/// attack, depending on the ratio. A chain of `n` one-poles rises later (its step response starts
/// flat), and mixing it with the first stage spans everything in between: the design takes the
/// lowest `order` whose pure chain is slow enough for the stated attack, then the weight `w` and
/// the time constant that give both stated times. The model is the processor's own arithmetic at
/// the control rate (pre-smoother sums, stages, the law) plus the cascade's lag behind a new
/// gain (`cascadeLagPeriods`), so the times are what a measurement reads, not an approximation.
///
/// **A fast first stage.** Where the band output limit holds the band's gain (its law falls 1 dB
/// per dB there), the attack needs the detector within 3 dB of the new power, while the release
/// still needs its tail: one one-pole matched to the release then attacks too slowly (8.1 ms for
/// a stated 5 ms at N3's 2 kHz band with its derived limit). There the first stage gets its own,
/// shorter time constant (`firstCoefficient`, a quarter of the stated attack) and is mixed with a
/// second, release-matched stage: the mix rises as fast as the first stage and decays as slowly
/// as the second. Everything stays linear with unity gain at DC, so the mean reading holds.
///
/// **Honest limits.** A band whose gain moves less than 4 dB over the 35 dB step (ratio below
/// about 1.13, or a linear band) has no measurable release, and one that moves less than 3 dB no
/// attack: there the detector (which still drives expansion and the band output limit) takes the
/// constants a 2:1 band with the same stated times would have, and `isMeasurable` is false. A
/// stated attack faster than the detector can be (the pre-smoother alone is slower at low
/// centres) is approached as closely as possible (`order` 1) and `predictedAttack` says what
/// it is; likewise an attack slower than the longest chain allows. Tech level 1 is a static
/// equalizer (ratio 1, no expansion, no limit): the times do not apply there at all.
struct DetectorDesign: Equatable {
    /// Control-rate stages the processor runs for every band (unused ones pass their input on).
    static var maximumOrder: Int { 6 }
    /// The ANSI S3.22 step (dB SPL) and tolerances (dB).
    static var stepLow: Double { 55 }
    static var stepHigh: Double { 90 }
    static var attackTolerance: Double { 3 }
    static var releaseTolerance: Double { 4 }
    /// How far (control periods) the output lags the power the detector reads. The sums behind a
    /// reading are half a period old on average. A band's change then reaches the output partly
    /// through the broadband gain, which ramps over one period (half a period to its middle: 1
    /// period in all), and partly through its bell, which is solved every other period (half a
    /// period's wait), ramps over two (one to its middle) and whose magnitude follows new
    /// coefficients within about half a period more (2.5 in all); the share depends on the other
    /// bands' gains, so the model takes the middle, 1.75 (`PersonalizationProcessor.updateCascade`).
    /// Measured: the ANSI attack at 2 kHz is within −10…+19 % of the stated one for N3, N5, N7 and
    /// S2 at tech levels 2–4; the former 1.5 (the ramps alone) read N3 at tech level 3 22 % slow.
    static var cascadeLagPeriods: Double { 1.75 }

    /// Stages of the chain (1…`maximumOrder`).
    var order: Int
    /// Per control period: `1 − exp(−T/τ)`.
    var coefficient: Double
    /// The first stage's coefficient: `coefficient`, or a faster one (see "A fast first stage").
    var firstCoefficient: Double
    /// Weight of the first stage's output in the mix (1 for `order` 1).
    var firstStageWeight: Double
    /// False when the band's gain moves too little over the step for the times to be measured.
    var isMeasurable: Bool
    /// The times (s) the design's model measures (for the band's law, or the 2:1 stand-in).
    var predictedAttack: Double
    var predictedRelease: Double

    /// The pre-smoother over one control period at a constant input power `x`:
    /// `e1 ← decay·e1 + sum1·x`, `e2 ← decay·e2 + cross·e1 + sum2·x`.
    struct PreSmoother {
        var decay: Double
        var cross: Double
        var sum1: Double
        var sum2: Double
    }

    /// Designs the detector of `band` (its law and stated times) for a control period of
    /// `periodSeconds` and the band's pre-smoother. Allocates nothing; call off the audio thread
    /// (a few hundred short simulations, well under a millisecond per band in release builds).
    init(band: BandDynamics, periodSeconds: Double, pre: PreSmoother) {
        let attack = band.attack / 1000, release = band.release / 1000
        let swing = band.gain(atLevel: Self.stepLow) - band.gain(atLevel: Self.stepHigh)
        let measurable = swing > Self.releaseTolerance
        // The law the times are designed for: the band's, or a 2:1 band's when its gain hardly moves.
        let law: (Double) -> Double = measurable ? { band.gain(atLevel: $0) } : { -0.5 * $0 }
        let model = Model(law: law, periodSeconds: periodSeconds, pre: pre)
        var best = model.design(attack: attack, release: release)
        best.isMeasurable = measurable
        self = best
    }

    init(order: Int, coefficient: Double, firstCoefficient: Double? = nil, firstStageWeight: Double, isMeasurable: Bool,
         predictedAttack: Double, predictedRelease: Double) {
        self.order = order
        self.coefficient = coefficient
        self.firstCoefficient = firstCoefficient ?? coefficient
        self.firstStageWeight = firstStageWeight
        self.isMeasurable = isMeasurable
        self.predictedAttack = predictedAttack
        self.predictedRelease = predictedRelease
    }

    /// The step-response model of the detector and the output it controls.
    struct Model {
        var law: (Double) -> Double
        var periodSeconds: Double
        var pre: PreSmoother

        /// ANSI attack and release times (s) of `order` stages of time constant `tau` (s) mixed
        /// with weight `w` (the first stage's time constant `firstTau`, when given);
        /// `.infinity` when not reached within `horizon` seconds.
        func times(order: Int, tau: Double, weight w: Double, firstTau: Double? = nil,
                   horizon: Double = 4) -> (attack: Double, release: Double) {
            let c = 1 - libmExp(-periodSeconds / tau)
            let cFirst = firstTau.map { 1 - libmExp(-periodSeconds / $0) } ?? c
            let p55 = libmPow(10, Self.low / 10), p90 = libmPow(10, Self.high / 10)
            let g55 = law(Self.low), g90 = law(Self.high)
            var e1 = 0.0, e2 = 0.0
            var stages = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            var attack = Double.infinity, release = Double.infinity
            var previous = (time: 0.0, up: g55 - g90, down: 0.0)
            let lag = DetectorDesign.cascadeLagPeriods * periodSeconds
            var k = 0
            let limit = Int(horizon / periodSeconds)
            while k < limit && (attack == .infinity || release == .infinity) {
                k += 1
                let old1 = e1
                e1 = pre.decay * e1 + pre.sum1
                e2 = pre.decay * e2 + pre.cross * old1 + pre.sum2
                withUnsafeMutableBytes(of: &stages) { raw in
                    let s = raw.bindMemory(to: Double.self)
                    var input = e2
                    for j in 0..<DetectorDesign.maximumOrder {
                        s[j] += (j == 0 ? cFirst : j < order ? c : 1) * (input - s[j])
                        input = s[j]
                    }
                }
                let u = order == 1 ? stages.0 : w * stages.0 + (1 - w) * stages.5
                let up = law(10 * libmLog10(p55 + (p90 - p55) * u)) - g90
                let down = g55 - law(10 * libmLog10(p90 + (p55 - p90) * u))
                let time = Double(k) * periodSeconds + lag
                if attack == .infinity && up <= DetectorDesign.attackTolerance {
                    attack = Self.crossing(previous.time, previous.up, time, up, DetectorDesign.attackTolerance)
                }
                if release == .infinity && down <= DetectorDesign.releaseTolerance {
                    release = Self.crossing(previous.time, previous.down, time, down, DetectorDesign.releaseTolerance)
                }
                previous = (time, up, down)
            }
            return (attack, release)
        }

        private static var low: Double { DetectorDesign.stepLow }
        private static var high: Double { DetectorDesign.stepHigh }

        /// Where the line from `(t0, v0)` to `(t1, v1)` meets `level` (the output moves
        /// smoothly within a control period: the cascade interpolates it).
        private static func crossing(_ t0: Double, _ v0: Double, _ t1: Double, _ v1: Double, _ level: Double) -> Double {
            guard v0 > level, v0 != v1 else { return t1 }
            return t0 + (t1 - t0) * (v0 - level) / (v0 - v1)
        }

        /// The time constant (s) at which `order` stages mixed with `w` release in `release` s:
        /// the release time grows with τ, nearly in proportion, so a few proportional steps and
        /// then bisection on the bracket they found.
        func tau(order: Int, weight w: Double, firstTau: Double? = nil,
                 release: Double) -> (tau: Double, times: (attack: Double, release: Double)) {
            var tau = release / 6
            var t = times(order: order, tau: tau, weight: w, firstTau: firstTau)
            for _ in 0..<12 {
                guard t.release.isFinite, t.release > 0 else {
                    tau *= 0.5
                    t = times(order: order, tau: tau, weight: w, firstTau: firstTau)
                    continue
                }
                let ratio = release / t.release
                if abs(ratio - 1) < 1e-4 { break }
                tau *= min(max(ratio, 0.25), 4)
                t = times(order: order, tau: tau, weight: w, firstTau: firstTau)
            }
            return (tau, t)
        }

        /// Two stages, the first with `attack / 4` as its time constant, the second matched to
        /// the release, mixed with the weight (bisection) at which the mix attacks in `attack`.
        /// `nil` when even the largest weight that still leaves a release tail is too slow.
        func fastFirstStage(attack: Double, release: Double) -> DetectorDesign? {
            let firstTau = attack / 4
            let cFirst = 1 - libmExp(-periodSeconds / firstTau)
            func make(_ w: Double, _ solved: (tau: Double, times: (attack: Double, release: Double))) -> DetectorDesign {
                DetectorDesign(order: 2, coefficient: 1 - libmExp(-periodSeconds / solved.tau), firstCoefficient: cFirst,
                               firstStageWeight: w, isMeasurable: true, predictedAttack: solved.times.attack,
                               predictedRelease: solved.times.release)
            }
            // Attack falls as w grows; past about 0.9 the second stage's share is too small to
            // carry a 4 dB release tail.
            let fastest = tau(order: 2, weight: 0.9, firstTau: firstTau, release: release)
            guard fastest.times.attack <= attack, abs(fastest.times.release - release) <= 1e-3 * release else { return nil }
            var low = 0.0, high = 0.9
            var best = (weight: 0.9, solved: fastest)
            for _ in 0..<24 {
                let w = 0.5 * (low + high)
                let candidate = tau(order: 2, weight: w, firstTau: firstTau, release: release)
                if candidate.times.attack <= attack {
                    high = w
                    best = (w, candidate)
                } else {
                    low = w
                }
                if abs(candidate.times.attack - attack) < 1e-6 { break }
            }
            return make(best.weight, best.solved)
        }

        /// The design: the lowest order whose pure chain attacks at least as slowly as `attack`,
        /// then the weight (bisection) at which the release-matched chain attacks in `attack`.
        func design(attack: Double, release: Double) -> DetectorDesign {
            let single = tau(order: 1, weight: 1, release: release)
            func make(_ order: Int, _ w: Double, _ solved: (tau: Double, times: (attack: Double, release: Double))) -> DetectorDesign {
                DetectorDesign(order: order, coefficient: 1 - libmExp(-periodSeconds / solved.tau), firstStageWeight: w,
                               isMeasurable: true, predictedAttack: solved.times.attack,
                               predictedRelease: solved.times.release)
            }
            // A single one-pole already attacks too slowly: a faster first stage, if one gets
            // there; else the single one-pole is the fastest there is.
            if single.times.attack >= attack {
                if single.times.attack - attack > 1e-6, let fast = fastFirstStage(attack: attack, release: release) {
                    return fast
                }
                return make(1, 1, single)
            }
            var chosen: (order: Int, solved: (tau: Double, times: (attack: Double, release: Double)))?
            for order in 2...DetectorDesign.maximumOrder {
                let pure = tau(order: order, weight: 0, release: release)
                if pure.times.attack >= attack { chosen = (order, pure); break }
                if order == DetectorDesign.maximumOrder { return make(order, 0, pure) }
            }
            guard let chosen else { return make(1, 1, single) }
            // Attack falls as w grows (w = 0: the pure chain, slow enough; w = 1: one stage, too fast).
            var low = 0.0, high = 1.0
            var solved = chosen.solved
            var weight = 0.0
            for _ in 0..<24 {
                let w = 0.5 * (low + high)
                let candidate = tau(order: chosen.order, weight: w, release: release)
                if candidate.times.attack >= attack { low = w; solved = candidate; weight = w } else { high = w }
                if abs(candidate.times.attack - attack) < 1e-6 { solved = candidate; weight = w; break }
            }
            return make(chosen.order, weight, solved)
        }
    }
}
