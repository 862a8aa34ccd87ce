import SoundFitModel

/// A personalization preset made ready for the audio thread: validated, with the filter
/// constants of its tech level (`EqualizerDesign`), gain laws and detector constants computed for
/// one sample rate.
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
    public let preset: PresetPayload
    public let layout: MultibandLayout
    public let sampleRate: Double

    let image: PersonalizationImage

    /// Builds the image for `sampleRate`. `techLevel`: the tech level of the processor it is for
    /// (nil: any). Allocates; call off the audio thread.
    public init(preset: PresetPayload, sampleRate: Double, techLevel: Int? = nil) throws(PresetValidationError) {
        try preset.validateBands()
        if let techLevel, techLevel != preset.techLevel.value {
            throw PresetValidationError("preset is for \(preset.techLevel), the processor is tech level \(techLevel)")
        }
        guard sampleRate.isFinite, sampleRate >= 8000 else {
            throw PresetValidationError("sample rate \(sampleRate) is not supported (at least 8000 Hz)")
        }
        let layout = MultibandLayout(techLevel: preset.techLevel.value)!
        self.preset = preset
        self.layout = layout
        self.sampleRate = sampleRate
        image = Self.makeImage(design: EqualizerDesign(layout: layout, sampleRate: sampleRate), preset: preset)
    }

    deinit {
        image.deallocate()
    }

    public var techLevel: Int { layout.techLevel }

    // MARK: - Image

    private static func makeImage(design: EqualizerDesign, preset: PresetPayload) -> PersonalizationImage {
        var image = PersonalizationImage.allocate()
        let h = design.layout.bandCount / 2, rowLength = PersonalizationImage.maximumHalfCount
        let sampleRate = design.sampleRate
        image.techLevel = preset.techLevel.value
        image.halfCount = h
        image.sampleRate = sampleRate
        /// A vector of band vector `b`'s lanes from a per-band value (left and right alike).
        func lanes(_ b: Int, _ value: (Int) -> Double) -> SIMD4<Float> {
            let low = Float(value(2 * b)), high = Float(value(2 * b + 1))
            return SIMD4(low, low, high, high)
        }
        for b in 0..<h {
            let loops = [2 * b, 2 * b + 1].map { SVFLoopCoefficients(design.analysis($0)).packed }
            for i in 0..<3 { image.analysis[4 * b + i] = SIMD4(loops[0][i], loops[0][i], loops[1][i], loops[1][i]) }
            image.analysis[4 * b + 3] = lanes(b) { 0.5 / design.analysisQ[$0] }
            image.bells[2 * b] = lanes(b) { libmTan(Double.pi * design.bellCentres[$0] / sampleRate) }
            image.bells[2 * b + 1] = lanes(b) { 1 / design.bellQ[$0] }
            image.uLow[b] = lanes(b) { design.uLow[$0] }
            image.uHigh[b] = lanes(b) { design.uHigh[$0] }
        }
        let low = Float(libmTan(Double.pi * design.lowCorner / sampleRate))
        let high = Float(libmTan(Double.pi * design.highCorner / sampleRate))
        image.shelfG = SIMD4(low, low, high, high)
        for κ in 0..<h {
            for σ in 0..<h {
                image.uSame[κ * rowLength + σ] = lanes(0) { [design.u[2 * κ][2 * σ], design.u[2 * κ + 1][2 * σ + 1]][$0] }
                image.uCross[κ * rowLength + σ] = lanes(0) { [design.u[2 * κ][2 * σ + 1], design.u[2 * κ + 1][2 * σ]][$0] }
                let m = design.interaction
                image.interactionSame[σ * rowLength + κ] = lanes(0) { [m[2 * σ][2 * κ], m[2 * σ + 1][2 * κ + 1]][$0] }
                image.interactionCross[σ * rowLength + κ] = lanes(0) { [m[2 * σ][2 * κ + 1], m[2 * σ + 1][2 * κ]][$0] }
            }
        }

        let period = PersonalizationImage.controlPeriod
        let controlSeconds = Double(period) / sampleRate
        var designs: [DetectorKey: DetectorDesign] = [:]
        for b in 0..<h {
            // Lanes: left band 2b, right band 2b, left band 2b+1, right band 2b+1.
            let lanes = [(preset.left[2 * b], 2 * b), (preset.right[2 * b], 2 * b),
                         (preset.left[2 * b + 1], 2 * b + 1), (preset.right[2 * b + 1], 2 * b + 1)]
            var law = BandLaw()
            var w1 = [[Float]](repeating: [Float](repeating: 0, count: 4), count: period), w2 = w1
            for (lane, (band, index)) in lanes.enumerated() {
                let slope = 1 / band.ratio - 1
                law.intercept[lane] = Float(band.gain - slope * band.referenceLevel)
                law.slope[lane] = Float(slope)
                law.knee[lane] = Float(band.knee)
                if let expansionKnee = band.expansionKnee {
                    law.expansionKnee[lane] = Float(min(expansionKnee, band.knee))
                    law.expansionSlope[lane] = Float(band.expansionRatio - 1)
                }
                law.maximumGain[lane] = Float(band.maximumGain)
                law.minimumGain[lane] = Float(band.minimumGain)
                law.outputLimit[lane] = Float(band.outputLimit)
                let levelOffset = Self.levelOffset(calibration: preset.calibration)
                law.levelOffset[lane] = Float(levelOffset)
                law.referencePower[lane] = Float(libmPow(10, (band.referenceLevel - levelOffset) / 10))
                // Pre-smoother: two one-poles on x², τ = 1.5 ms at 1 kHz, scaled with the period of
                // the band centre (0.5…3 ms), against the ripple of x² at twice the frequency
                // (the detector's stages after it smooth further: a 250 Hz tone reads within
                // 0.01 dB). At most 3 ms so that a 5 ms attack stays possible at 250 Hz.
                let tau = min(max(1.5e-3 * 1000 / design.layout.bandCentres[index], 0.5e-3), 3e-3)
                let a = 1 - libmExp(-1 / (sampleRate * tau)), r = 1 - a
                let preDecay = libmPow(r, Double(period)), preCross = Double(period) * a * libmPow(r, Double(period))
                law.preDecay[lane] = Float(preDecay)
                law.preCross[lane] = Float(preCross)
                var sum1 = 0.0, sum2 = 0.0
                for i in 0..<period {
                    let decay = libmPow(r, Double(period - 1 - i))
                    w1[i][lane] = Float(a * decay)
                    w2[i][lane] = Float(a * a * Double(period - i) * decay)
                    sum1 += a * decay
                    sum2 += a * a * Double(period - i) * decay
                }
                // The control-rate detector for the stated times and this band's law (the two
                // ears' bands are often alike: designed once).
                let pre = DetectorDesign.PreSmoother(decay: preDecay, cross: preCross, sum1: sum1, sum2: sum2)
                let key = DetectorKey(band: band, tau: tau)
                let detector = designs[key] ?? DetectorDesign(band: band, periodSeconds: controlSeconds, pre: pre)
                designs[key] = detector
                for j in 0..<DetectorDesign.maximumOrder {
                    let coefficient = j == 0 ? detector.firstCoefficient : j < detector.order ? detector.coefficient : 1
                    image.detectorCoefficients[b * DetectorDesign.maximumOrder + j][lane] = Float(coefficient)
                }
                image.detectorStages = max(image.detectorStages, detector.order)
                law.firstStageWeight[lane] = Float(detector.firstStageWeight)
            }
            image.laws[b] = law
            for i in 0..<period {
                image.weights[b * 2 * period + 2 * i] = SIMD4(w1[i])
                image.weights[b * 2 * period + 2 * i + 1] = SIMD4(w2[i])
            }
        }
        return image
    }

    /// dB from detector power to band level: a full-scale sine (power ½) reads `calibration`.
    /// The analysis band-passes have unity gain at their centres, so a sine at a band centre
    /// reads its own level in that band.
    static func levelOffset(calibration: Double) -> Double {
        calibration + 10 * libmLog10(2)
    }
}

/// What a band's detector design depends on: its stated times, its gain over the ANSI step and
/// its pre-smoother.
private struct DetectorKey: Hashable {
    var attack: Double
    var release: Double
    var gains: [Double]
    var tau: Double

    init(band: BandDynamics, tau: Double) {
        attack = band.attack
        release = band.release
        // The law enters the design only through the gains the step passes through.
        gains = stride(from: DetectorDesign.stepLow, through: DetectorDesign.stepHigh, by: 0.25).map { band.gain(atLevel: $0) }
        self.tau = tau
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
