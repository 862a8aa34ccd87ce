/// A personalization preset made ready for the audio thread: validated, with the crossover
/// coefficients, gain laws, detector constants and fitting offsets computed for one sample rate.
///
/// Swap protocol (the engine follows it; SoundFitDSP never frees anything on the audio thread):
/// 1. Control thread: `let prepared = try PreparedPersonalization(preset:sampleRate:techLevel:)`
///    (allocates; rejects invalid presets and presets for another tech level), then
///    `let handle = Unmanaged.passRetained(prepared)` and send `handle.toOpaque()` to the audio
///    thread (an SPSC command ring).
/// 2. Audio thread: `chain.installPersonalization(handle)`. It copies the image (no allocation,
///    no reference counting) and returns either `.installed(retired:)` with the previously
///    installed handle (or nil) or `.rejected(handle)` (tech level or sample rate do not match the
///    chain). Send whatever came back to the control side (an acknowledgement ring).
/// 3. Control thread: `retired.release()` (or `rejected.release()`): the last reference goes
///    away there. `removePersonalization()` and `setPersonalizationTechLevel(_:)` hand back the
///    installed handle the same way.
///
/// The object is immutable after `init`, so it may be shared across threads.
public final class PreparedPersonalization: @unchecked Sendable {
    public let preset: MultibandPreset
    public let layout: MultibandLayout
    public let sampleRate: Double
    /// The fitting offsets (dB) added to each band's gain law, per ear in band order: solved so
    /// that a sine at a band centre at that band's reference level gets the band's prescribed gain
    /// despite the overlap of neighbouring bands (bounded to ±`fitOffsetLimit`; a band whose offset
    /// hit the bound keeps a residual error).
    public let fitOffsets: (left: [Double], right: [Double])
    /// The bound of the fitting offsets (dB).
    public static var fitOffsetLimit: Double { 20 }

    let image: PersonalizationImage

    /// Builds the image for `sampleRate`. `techLevel`: the tech level of the processor it is for
    /// (nil: any). Allocates; call off the audio thread.
    public init(preset: MultibandPreset, sampleRate: Double, techLevel: Int? = nil) throws(MultibandPresetError) {
        try preset.validate()
        if let techLevel, techLevel != preset.techLevel {
            throw MultibandPresetError("preset is for tech level \(preset.techLevel), the processor is tech level \(techLevel)")
        }
        guard sampleRate.isFinite, sampleRate >= 8000 else {
            throw MultibandPresetError("sample rate \(sampleRate) is not supported (at least 8000 Hz)")
        }
        let layout = MultibandLayout(techLevel: preset.techLevel)!
        let design = CrossoverTreeDesign(layout: layout)
        let shares = design.centreShares(sampleRate: sampleRate)
        let offsets = (left: Self.fitOffsets(for: preset.left, shares: shares, calibration: preset.calibration),
                       right: Self.fitOffsets(for: preset.right, shares: shares, calibration: preset.calibration))
        self.preset = preset
        self.layout = layout
        self.sampleRate = sampleRate
        fitOffsets = offsets
        image = Self.makeImage(design: design, preset: preset, shares: shares, offsets: offsets, sampleRate: sampleRate)
    }

    deinit {
        image.deallocate()
    }

    public var techLevel: Int { layout.techLevel }

    // MARK: - Image

    private static func makeImage(design: CrossoverTreeDesign, preset: MultibandPreset, shares: [[Double]],
                                  offsets: (left: [Double], right: [Double]), sampleRate: Double) -> PersonalizationImage {
        var image = PersonalizationImage.allocate()
        let h = design.halfCount
        image.techLevel = preset.techLevel
        image.halfCount = h
        image.opCount = design.ops.count
        image.slotCount = design.slotCount
        image.stateCount = design.stateCount
        image.sampleRate = sampleRate
        precondition(design.ops.count <= PersonalizationImage.maximumOps
                     && design.coefficientCrossovers.count <= PersonalizationImage.maximumSets
                     && design.stateCount <= PersonalizationImage.maximumStates
                     && design.slotCount <= PersonalizationImage.maximumSlots)
        for (i, op) in design.ops.enumerated() { image.ops[i] = op }
        for (i, c) in design.coefficients(sampleRate: sampleRate).enumerated() { image.coefficients[i] = c }
        for b in 0..<h { image.bandSlots[b] = design.bandSlots[b] }

        let period = PersonalizationImage.controlPeriod
        let controlSeconds = Double(period) / sampleRate
        for b in 0..<h {
            // Lanes: left band b, right band b, left band h+b, right band h+b.
            let lanes = [(preset.left[b], offsets.left[b], b), (preset.right[b], offsets.right[b], b),
                         (preset.left[h + b], offsets.left[h + b], h + b), (preset.right[h + b], offsets.right[h + b], h + b)]
            var law = BandLaw()
            var w1 = [[Float]](repeating: [Float](repeating: 0, count: 4), count: period), w2 = w1
            for (lane, (band, offset, index)) in lanes.enumerated() {
                let slope = 1 / band.ratio - 1
                law.intercept[lane] = Float(band.gain - slope * band.referenceLevel)
                law.slope[lane] = Float(slope)
                law.knee[lane] = Float(band.knee)
                if let expansionKnee = band.expansionKnee {
                    law.expansionKnee[lane] = Float(min(expansionKnee, band.knee))
                    law.expansionSlope[lane] = Float(band.expansionRatio - 1)
                }
                law.maximumGain[lane] = Float(band.maximumGain)
                law.fitOffset[lane] = Float(offset)
                law.outputLimit[lane] = Float(band.outputLimit)
                let levelOffset = Self.levelOffset(calibration: preset.calibration, share: shares[index][index])
                law.levelOffset[lane] = Float(levelOffset)
                law.referencePower[lane] = Float(libmPow(10, (band.referenceLevel - levelOffset) / 10))
                law.attack[lane] = Float(1 - libmExp(-controlSeconds / (band.attack / 1000)))
                law.release[lane] = Float(1 - libmExp(-controlSeconds / (band.release / 1000)))
                // Pre-smoother: two one-poles on x², τ = 1.5 ms at 1 kHz, scaled with the period of
                // the band centre (0.5…6 ms), against the ripple of x² at twice the frequency.
                let tau = min(max(1.5e-3 * 1000 / layout(preset).bandCentres[index], 0.5e-3), 6e-3)
                let a = 1 - libmExp(-1 / (sampleRate * tau)), r = 1 - a
                law.preDecay[lane] = Float(libmPow(r, Double(period)))
                law.preCross[lane] = Float(Double(period) * a * libmPow(r, Double(period)))
                for i in 0..<period {
                    let decay = libmPow(r, Double(period - 1 - i))
                    w1[i][lane] = Float(a * decay)
                    w2[i][lane] = Float(a * a * Double(period - i) * decay)
                }
            }
            image.laws[b] = law
            for i in 0..<period {
                image.weights[b * 2 * period + 2 * i] = SIMD4(w1[i])
                image.weights[b * 2 * period + 2 * i + 1] = SIMD4(w2[i])
            }
        }
        return image
    }

    private static func layout(_ preset: MultibandPreset) -> MultibandLayout {
        MultibandLayout(techLevel: preset.techLevel)!
    }

    /// dB from detector power to band level: a full-scale sine (power ½) reads `calibration`;
    /// band powers are divided by the band's share of a sine at its own centre, so a sine at the
    /// centre reads its own level.
    static func levelOffset(calibration: Double, share: Double) -> Double {
        calibration + 10 * libmLog10(2) - 20 * libmLog10(share)
    }

    // MARK: - Fitting offsets

    /// Solves `Σⱼ βⱼ(fₖ)·uⱼ·10^(gⱼ(Lₖⱼ)/20) = 10^(gₖ(Rₖ)/20)` for every band k, where a sine at
    /// band k's centre at its reference level `Rₖ` reads `Lₖⱼ = Rₖ + 20·log10(βⱼ(fₖ)/βⱼ(fⱼ))` in
    /// band j, with `uⱼ = 10^(offsetⱼ/20)` bounded to ±`fitOffsetLimit` dB (active set: the worst
    /// violator is fixed at its bound and the rest solved again).
    static func fitOffsets(for bands: [BandDynamics], shares: [[Double]], calibration: Double) -> [Double] {
        let n = bands.count
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        var target = [Double](repeating: 0, count: n)
        for k in 0..<n {
            for j in 0..<n {
                let share = max(shares[k][j], 1e-12)
                let level = bands[k].referenceLevel + 20 * libmLog10(share / shares[j][j])
                matrix[k][j] = share * libmPow(10, bands[j].gain(atLevel: level) / 20)
            }
            target[k] = libmPow(10, bands[k].gain(atLevel: bands[k].referenceLevel) / 20)
        }
        let lower = libmPow(10, -fitOffsetLimit / 20), upper = libmPow(10, fitOffsetLimit / 20)
        var fixed = [Int: Double]()
        while fixed.count < n {
            let free = (0..<n).filter { fixed[$0] == nil }
            let system = free.map { k in free.map { matrix[k][$0] } }
            let rhs = free.map { k in target[k] - fixed.reduce(0) { $0 + matrix[k][$1.key] * $1.value } }
            guard let u = solve(system, rhs) else { break }
            let violations = free.indices.filter { u[$0] < lower || u[$0] > upper }
            if violations.isEmpty {
                var result = [Double](repeating: 0, count: n)
                for (i, j) in free.enumerated() { result[j] = 20 * libmLog10(u[i]) }
                for (j, value) in fixed { result[j] = 20 * libmLog10(value) }
                return result
            }
            let worst = violations.max { max(lower - u[$0], u[$0] - upper) < max(lower - u[$1], u[$1] - upper) }!
            fixed[free[worst]] = u[worst] < lower ? lower : upper
        }
        // Degenerate: no correction.
        return [Double](repeating: 0, count: n)
    }

    /// Gaussian elimination with partial pivoting; nil when singular.
    private static func solve(_ a: [[Double]], _ b: [Double]) -> [Double]? {
        let n = b.count
        var m = a, x = b
        for col in 0..<n {
            let pivot = (col..<n).max { abs(m[$0][col]) < abs(m[$1][col]) }!
            guard abs(m[pivot][col]) > 1e-15 else { return nil }
            m.swapAt(col, pivot)
            x.swapAt(col, pivot)
            for row in (col + 1)..<n {
                let f = m[row][col] / m[col][col]
                for c in col..<n { m[row][c] -= f * m[col][c] }
                x[row] -= f * x[col]
            }
        }
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = x[row]
            for c in (row + 1)..<n { s -= m[row][c] * x[c] }
            x[row] = s / m[row][row]
        }
        return x
    }
}

/// What `ProcessingChain.installPersonalization(_:)` did with a prepared preset.
public enum PersonalizationInstallResult {
    /// Installed; `retired` (the previous preset, if any) must be released on the control side.
    case installed(retired: Unmanaged<PreparedPersonalization>?)
    /// Not installed (another tech level or sample rate than the chain's): release it on the
    /// control side.
    case rejected(Unmanaged<PreparedPersonalization>)
}
