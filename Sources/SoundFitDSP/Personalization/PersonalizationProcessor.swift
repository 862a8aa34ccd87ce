import SoundFitModel

/// Stage 0 of the chain: the multiband personalization processor (per-ear band gains with wide
/// dynamic range compression, expansion and a per-band limiter): an analysis bank measures each
/// band's level, and a cascade equalizer applies the band gains (`EqualizerDesign`).
///
/// **Channels.** Channels are processed in pairs (1+2, 3+4, …): the first of a pair (odd
/// channel numbers, counting from 1) gets the left ear's preset, the second the right ear's. Mono
/// gets the left ear; a lone last channel of an odd count is processed with the left ear too.
///
/// **Dynamics.** Each band's level comes from a power detector on its analysis band-pass: x² is
/// pre-smoothed by two one-poles (0.5…6 ms, against the ripple of x²) and evaluated once per
/// control period (`PersonalizationImage.controlPeriod` = 32 samples) through a chain of up to six
/// one-poles whose first and last outputs are mixed (`DetectorDesign`). Every part is linear, so
/// the detector reads the mean power of any stationary signal (noise and a tone of equal power
/// read alike, no attack/release bias), and its constants are derived from the preset's
/// `attack`/`release` and the band's law so that ANSI S3.22 measures exactly those times (a tone
/// at the band centre stepping 55 ↔ 90 dB SPL; within 3 dB after the step up, 4 dB after the step
/// down; bands whose gain moves less than that use a 2:1 band's constants; tech level 1 is a
/// static equalizer, no times apply). The band-passes have unity gain at their centres, so
/// a sine at a band centre reads its own level (`PresetPayload.calibration` = dB SPL of a
/// full-scale sine). The gain law (`BandDynamics.gain(atLevel:)`) gives each band's gain per
/// period. The cascade follows: broadband gain and shelves every period, the bells by one step of
/// the design's iteration every other period (they settle within a few steps); the filters'
/// cores change at those updates and their output mix is interpolated per sample.
///
/// **Intensity.** Each band's linear gain becomes `1 + i·(g − 1)`; `i` moves over 30 ms. At 0 dB
/// every section of the cascade is the identity; when the intensity has arrived at 0 the processor
/// also cross-fades to the dry input over 15 ms and then skips the DSP, so intensity 0 is
/// bit-exact transparent. Leaving 0 fades the processing back in.
///
/// **Enable.** Disabling cross-fades to the dry input over 15 ms, then the stage is skipped (the
/// buffers are untouched, bit for bit). Enabling resets filter states, starts every detector at
/// its band's reference level and fades in. Without an installed preset the stage is skipped.
///
/// **Presets.** `install(_:)` takes a `PreparedPersonalization` (built off the audio thread),
/// copies its image and hands the previous one back. The filters are the same for every preset
/// of a tech level and sample rate, so their states carry on; the band gains move from their
/// current values to the new law over 50 ms (an offset in dB that ramps to 0).
///
/// Threads: `init` allocates and must not run on the audio thread. Every other method is real-time
/// safe (no allocation, locks, reference counting or I/O) and is called by the one owner of the
/// value, normally the audio thread.
public struct PersonalizationProcessor: ~Copyable {
    /// Duration of an intensity move.
    public static var intensityRampSeconds: Double { 0.030 }
    /// Duration of the enable/disable and transparency cross-fades.
    public static var bypassFadeSeconds: Double { 0.015 }
    /// Duration of the gain ramp after a preset change.
    public static var presetRampSeconds: Double { 0.050 }

    public private(set) var spec: ProcessingSpec
    /// The current targets (clamped into range).
    public private(set) var settings: PersonalizationSettings
    /// The tech level whose presets this processor accepts.
    public private(set) var techLevel: Int
    /// The installed preset (nil: none). The processor holds no reference: the handle's
    /// retain belongs to whoever installed it and comes back from the next install or removal.
    public private(set) var installed: Unmanaged<PreparedPersonalization>?
    /// The build of the per-sample loops that runs (see `SIMDPath`), fixed at set-up.
    public let simdPath: SIMDPath

    private var image: PersonalizationImage
    /// True while `image` holds a preset for the current sample rate and it is wanted.
    private var hasPreset = false
    private let pairCount: Int
    /// Per pair: `maximumHalfCount` analysis filter states (two SIMD4 each).
    private let analysisStates: UnsafeMutablePointer<SIMD4<Float>>
    /// Per pair: `maximumSectionVectors` cascade section states (three SIMD4 each) and ramps.
    private let cascadeStates: UnsafeMutablePointer<SIMD4<Float>>
    private let ramps: UnsafeMutablePointer<SectionRamp>
    /// Per pair: the bell gains (dB) of every bell vector, the iteration's state.
    private let bellGains: UnsafeMutablePointer<SIMD4<Float>>
    /// Per pair: the broadband linear gain `(·, ·, left, right)` and its per-sample step.
    private let broadband: UnsafeMutablePointer<SIMD4<Float>>
    /// Per pair: `maximumHalfCount` level detectors.
    private let bandStates: UnsafeMutablePointer<BandState>
    /// Per pair and band vector: the `DetectorDesign.maximumOrder` control-rate stages (power).
    private let detectorStages: UnsafeMutablePointer<SIMD4<Float>>
    /// The pair's signal over one control period.
    private let slots: UnsafeMutablePointer<SIMD4<Float>>
    /// Control-rate scratch: band targets, bell terms and errors (`scratchVectors` per vector).
    private let scratch: UnsafeMutablePointer<SIMD4<Float>>
    private let wetBuffer: UnsafeMutablePointer<Float>
    private static var scratchVectors: Int { 6 }

    private var intensity: LinearRamp
    private var wet: LinearRamp
    private var presetRamp = LinearRamp(value: 0)
    private var intensitySteps = 1
    private var fadeSamples = 1
    private var presetSteps = 1
    /// Position inside the current control period (0: an update is due).
    private var periodPosition = 0
    /// The next control update jumps the gains instead of ramping them (after a reset).
    private var snapGains = true
    /// True on the control periods that update the bells (every other one, see `updateCascade`).
    private var bellPeriod = true
    private var bypassed = true

    /// Prepares the processor for `spec` (storage for the largest tech level), starting at
    /// `settings` with no preset, running the per-sample loops on `simdPath` if this CPU can
    /// (else on the baseline). Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: PersonalizationSettings = PersonalizationSettings(), techLevel: Int = 3,
                simdPath: SIMDPath = .preferred) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        precondition(MultibandLayout.techLevels.contains(techLevel), "tech level must be 1…4")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        self.techLevel = techLevel
        self.simdPath = simdPath.runnable
        image = PersonalizationImage.allocate()
        pairCount = (spec.channelCount + 1) / 2
        func vectors(_ count: Int, _ value: SIMD4<Float> = SIMD4()) -> UnsafeMutablePointer<SIMD4<Float>> {
            let pointer = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: count)
            pointer.initialize(repeating: value, count: count)
            return pointer
        }
        let half = PersonalizationImage.maximumHalfCount, sections = PersonalizationImage.maximumSectionVectors
        analysisStates = vectors(2 * half * pairCount)
        cascadeStates = vectors(3 * sections * pairCount)
        ramps = .allocate(capacity: sections * pairCount)
        for index in 0..<(sections * pairCount) { (ramps + index).initialize(to: SectionRamp(vector: index % sections)) }
        bellGains = vectors(half * pairCount)
        broadband = vectors(2 * pairCount)
        bandStates = .allocate(capacity: half * pairCount)
        bandStates.initialize(repeating: BandState(), count: half * pairCount)
        detectorStages = vectors(DetectorDesign.maximumOrder * half * pairCount)
        slots = vectors(PersonalizationImage.controlPeriod)
        scratch = vectors(Self.scratchVectors * half)
        wetBuffer = .allocate(capacity: PersonalizationImage.controlPeriod)
        wetBuffer.initialize(repeating: 1, count: PersonalizationImage.controlPeriod)
        intensity = LinearRamp(value: Double(settings.intensity))
        wet = LinearRamp(value: 0)
        updateRampLengths()
    }

    deinit {
        image.deallocate()
        for pointer in [analysisStates, cascadeStates, bellGains, broadband, slots, scratch, detectorStages] {
            pointer.deallocate()
        }
        ramps.deallocate()
        bandStates.deallocate()
        wetBuffer.deallocate()
    }

    /// True when `process` currently leaves the buffers untouched.
    public var isBypassed: Bool { bypassed }

    /// True when a preset for the current tech level and sample rate is installed.
    public var hasInstalledPreset: Bool { hasPreset }

    // MARK: - Meters

    /// The bands of the running preset (0 while the stage is bypassed): what `bandMeter` reads.
    public var meteredBandCount: Int { bypassed ? 0 : image.halfCount &* 2 }

    /// Band `band` (0 ..< `meteredBandCount`) of channel `channel` at the last control update:
    /// the gain it applies (dB, after intensity) and its gain reduction as a compressor's meter
    /// shows it — how many dB compression above the knee and the band output limit take off the
    /// gain the preset's law gives below the knee (capped at its maximum gain), before intensity
    /// scales it; 0 for a linear band. Downward expansion of quiet input (the law's noise floor
    /// handling) is not reduction: silence reads 0, not the tens of dB the expander takes.
    /// The first channel of a pair is the left ear. Real-time safe: reads preallocated state.
    @inline(__always)
    public func bandMeter(channel: Int, band: Int) -> (gain: Float, reduction: Float) {
        let pair = channel >> 1, ear = channel & 1, vector = band >> 1
        let lane = (band & 1) &* 2 &+ ear
        let state = bandStates[pair &* PersonalizationImage.maximumHalfCount &+ vector]
        let law = image.laws[vector]
        let unreduced = min(law.intercept[lane] + law.slope[lane] * law.knee[lane], law.maximumGain[lane])
        let level = law.level(ofPower: state.envelope)[lane]
        let expansion = law.expansionSlope[lane] * max(law.expansionKnee[lane] - level, 0)
        return (state.appliedDecibels[lane], max(unreduced - expansion - state.gainDecibels[lane], 0))
    }

    // MARK: - Control

    /// Installs `prepared` (see `PreparedPersonalization` for the protocol). Rejected, and handed
    /// back untouched, when its tech level or sample rate differ from the processor's.
    /// Real-time safe: copies the image; never retains or releases.
    public mutating func install(_ prepared: Unmanaged<PreparedPersonalization>) -> PersonalizationInstallResult {
        let newImage = prepared._withUnsafeGuaranteedRef { $0.image }
        guard newImage.techLevel == techLevel, newImage.sampleRate == spec.sampleRate else { return .rejected(prepared) }
        let retired = installed
        installed = prepared
        if bypassed {
            image.copy(from: newImage)
            hasPreset = true
            presetRamp.snap(to: 0)
            updateBypass()
        } else {
            // Running: the tree is the same, states carry on; the gains cross over in dB.
            // Detector stages the old preset did not run take the value of its last one.
            let oldStages = image.detectorStages
            image.copy(from: newImage)
            hasPreset = true
            for pair in 0..<pairCount {
                for b in 0..<image.halfCount {
                    let stages = detectorStages + DetectorDesign.maximumOrder &* (pair &* PersonalizationImage.maximumHalfCount &+ b)
                    for j in oldStages..<DetectorDesign.maximumOrder { stages[j] = stages[oldStages &- 1] }
                    let state = bandStates + (pair &* PersonalizationImage.maximumHalfCount &+ b)
                    let law = image.laws[b]
                    let level = law.level(ofPower: state.pointee.envelope)
                    state.pointee.presetOffset = state.pointee.gainDecibels - law.gain(atLevel: level)
                }
            }
            presetRamp.snap(to: 1)
            presetRamp.setTarget(0, steps: presetSteps)
            updateBypass()
        }
        return .installed(retired: retired)
    }

    /// Removes the installed preset (fading out over 15 ms if it was heard) and returns it for
    /// release on the control side. Real-time safe.
    public mutating func removePreset() -> Unmanaged<PreparedPersonalization>? {
        let retired = installed
        installed = nil
        hasPreset = false
        updateBypass()
        return retired
    }

    /// Switches to presets of `newTechLevel` (a new session): the installed preset is removed at
    /// once, without a fade (call it while the stage is disabled or silent), and returned for
    /// release. Real-time safe.
    public mutating func setTechLevel(_ newTechLevel: Int) -> Unmanaged<PreparedPersonalization>? {
        guard newTechLevel != techLevel, MultibandLayout.techLevels.contains(newTechLevel) else { return nil }
        techLevel = newTechLevel
        let retired = installed
        installed = nil
        hasPreset = false
        bypassed = true
        wet.snap(to: 0)
        return retired
    }

    /// Changes the sample rate. A preset prepared for another rate stops applying (the stage
    /// passes through) until one prepared for the new rate is installed. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        spec.sampleRate = sampleRate
        updateRampLengths()
        if image.sampleRate != sampleRate { hasPreset = false }
        reset()
    }

    /// Clears all states and jumps the smoothers to their targets. Real-time safe.
    public mutating func reset() {
        intensity.snapToTarget()
        presetRamp.snap(to: 0)
        if wantsWet {
            clearStates()
            wet.snap(to: 1)
            bypassed = false
        } else {
            wet.snap(to: 0)
            bypassed = true
        }
    }

    /// Sets new targets: intensity moves over 30 ms, enabling and disabling cross-fade over
    /// 15 ms. Real-time safe.
    public mutating func apply(_ newSettings: PersonalizationSettings) {
        let target = newSettings.clamped()
        guard target != settings else { return }
        settings = target
        if bypassed {
            intensity.snap(to: Double(target.intensity))
        } else if Double(target.intensity) != intensity.target {
            intensity.setTarget(Double(target.intensity), steps: intensitySteps)
        }
        updateBypass()
    }

    /// The wet level is wanted: enabled, a preset, and an intensity above 0 (or still moving).
    private var wantsWet: Bool {
        settings.isEnabled && hasPreset && (intensity.target > 0 || intensity.value > 0)
    }

    /// Starts the fade the current state calls for.
    private mutating func updateBypass() {
        let wanted = wantsWet
        if bypassed {
            guard wanted else { return }
            // Fade in from fresh states.
            clearStates()
            intensity.snapToTarget()
            presetRamp.snap(to: 0)
            wet.snap(to: 0)
            wet.setTarget(1, steps: fadeSamples)
            bypassed = false
        } else {
            let target = wanted ? 1.0 : 0.0
            if wet.target != target { wet.setTarget(target, steps: fadeSamples) }
        }
    }

    private mutating func updateRampLengths() {
        let period = Double(PersonalizationImage.controlPeriod) / spec.sampleRate
        intensitySteps = LinearRamp.steps(forSeconds: Self.intensityRampSeconds, stepSeconds: period)
        presetSteps = LinearRamp.steps(forSeconds: Self.presetRampSeconds, stepSeconds: period)
        fadeSamples = LinearRamp.steps(forSeconds: Self.bypassFadeSeconds, stepSeconds: 1 / spec.sampleRate)
    }

    /// Zero filter states and bell gains; detectors at each band's reference level; gains and
    /// coefficients computed afresh at the next control update.
    private mutating func clearStates() {
        let half = PersonalizationImage.maximumHalfCount, sections = PersonalizationImage.maximumSectionVectors
        analysisStates.update(repeating: SIMD4(), count: 2 * half * pairCount)
        cascadeStates.update(repeating: SIMD4(), count: 3 * sections * pairCount)
        bellGains.update(repeating: SIMD4(), count: half * pairCount)
        for pair in 0..<pairCount {
            for b in 0..<half {
                var state = BandState()
                if b < image.halfCount {
                    let reference = image.laws[b].referencePower
                    state.e1 = reference
                    state.e2 = reference
                    state.envelope = reference
                }
                bandStates[pair &* half &+ b] = state
                let stages = detectorStages + DetectorDesign.maximumOrder &* (pair &* half &+ b)
                stages.update(repeating: state.envelope, count: DetectorDesign.maximumOrder)
            }
        }
        periodPosition = 0
        snapGains = true
    }

    // MARK: - Processing

    /// Processes `spec.channelCount` non-interleaved channels in place. Any `frameCount >= 0`.
    /// Real-time safe: may be called on the audio thread.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var done = 0
        while done < frameCount && !bypassed {
            if periodPosition == 0 { controlUpdate() }
            let period = PersonalizationImage.controlPeriod
            let count = min(period &- periodPosition, frameCount &- done)
            let fading = wet.isRamping
            if fading { wet.fill(wetBuffer, count: count) }
            for pair in 0..<pairCount {
                runPair(pair, buffers, start: done, count: count, wet: fading ? UnsafePointer(wetBuffer) : nil)
            }
            periodPosition &+= count
            if periodPosition == period { periodPosition = 0 }
            done &+= count
            if !wet.isRamping && wet.value == 0 { bypassed = true }
        }
    }

    /// Levels and gains of every band of every pair, and the cascade's coefficients, once per
    /// control period.
    private mutating func controlUpdate() {
        if !wet.isRamping && wet.value == 1 && !wantsWet { wet.setTarget(0, steps: fadeSamples) }
        let i = Float(intensity.step())
        let presetShare = SIMD4<Float>(repeating: Float(presetRamp.step()))
        let snap = snapGains
        snapGains = false
        bellPeriod = snap || !bellPeriod
        let iterations = snap ? 8 : (bellPeriod ? 1 : 0)
        let decibelsToLog2 = SIMD4<Float>(repeating: 0.166_096_404_744_368)   // log2(10)/20
        let half = PersonalizationImage.maximumHalfCount, h = image.halfCount
        let targets = scratch
        for pair in 0..<pairCount {
            let states = bandStates + pair &* half
            for b in 0..<h {
                let law = image.laws[b]
                var s = states[b]
                let e1 = s.e1
                s.e1 = law.preDecay * e1 + s.sum1
                s.e2 = law.preDecay * s.e2 + law.preCross * e1 + s.sum2
                s.sum1 = SIMD4()
                s.sum2 = SIMD4()
                // The linear detector (`DetectorDesign`): stages past the band's order pass on.
                let stages = detectorStages + DetectorDesign.maximumOrder &* (pair &* half &+ b)
                let coefficients = image.detectorCoefficients + DetectorDesign.maximumOrder &* b
                var input = s.e2
                for j in 0..<image.detectorStages {
                    let value = stages[j] + coefficients[j] * (input - stages[j])
                    stages[j] = value
                    input = value
                }
                s.envelope = input + law.firstStageWeight * (stages[0] - input)
                s.level = law.level(ofPower: s.envelope)
                s.gainDecibels = law.gain(atLevel: s.level) + s.presetOffset * presetShare
                var gain = s.gainDecibels
                if i != 1 {
                    // Intensity interpolates the linear gain: 20·log10(1 + i·(g − 1)).
                    let linear = fastExp2(gain * decibelsToLog2)
                    let mixed = 1 + SIMD4(repeating: i) * (linear - 1)
                    gain = SIMD4(repeating: 6.020_599_913) * fastLog2(maximum(mixed, SIMD4(repeating: 1e-6)))
                }
                targets[b] = maximum(gain, SIMD4(repeating: -60))
                s.appliedDecibels = targets[b]
                states[b] = s
            }
            updateCascade(pair: pair, targets: UnsafePointer(targets), iterations: iterations, snap: snap)
        }
    }

    /// Solves the pair's cascade for the band gains `targets` (dB, band vectors) and sets its
    /// coefficient ramps: the broadband gain and shelves every period, the bells by `iterations`
    /// steps of the design's iteration (one every other period, eight after a reset: the bells
    /// settle within a few steps, faster than any level detector moves). The bells' mix then ramps
    /// over the two periods to the next bell period, so their gains move without a staircase (a
    /// one-period ramp held for a period modulates a tone: −68 dB zipper noise in an N3 intensity
    /// ramp). Every other period saves the iteration's share of the stage's time (about 8 %).
    @inline(__always)
    private func updateCascade(pair: Int, targets: UnsafePointer<SIMD4<Float>>, iterations: Int, snap: Bool) {
        let half = PersonalizationImage.maximumHalfCount, h = image.halfCount
        let limit = SIMD4<Float>(repeating: Float(EqualizerDesign.sectionGainLimit))
        // Broadband gain per ear: the middle of the band gains' range.
        var highest = targets[0], lowest = targets[0]
        for b in 1..<h {
            highest = maximum(highest, targets[b])
            lowest = minimum(lowest, targets[b])
        }
        let middle = 0.5 * (maximum(highest.lowHalf, highest.highHalf) + minimum(lowest.lowHalf, lowest.highHalf))
        let broadbandDecibels = SIMD4(lowHalf: middle, highHalf: middle)
        // Shelves: the lowest band's gain down to DC, the highest band's up to Nyquist.
        let shelves = minimum(maximum(
            SIMD4(lowHalf: targets[0].lowHalf, highHalf: targets[h &- 1].highHalf) - broadbandDecibels, -limit), limit)
        let gains = bellGains + pair &* half
        let steps = SIMD4<Float>(repeating: 1 / Float(PersonalizationImage.controlPeriod))
        let ramps = self.ramps + pair &* PersonalizationImage.maximumSectionVectors
        if iterations > 0 {
            for _ in 0..<iterations {
                iterateBells(gains, targets: targets, broadband: broadbandDecibels, shelves: shelves)
            }
            // The bells' mix ramps over two periods, to the next bell period.
            for σ in 0..<h {
                ramps[σ].setTarget(bellCoefficients(σ, gains: gains[σ]), steps: 0.5 * steps, snap: snap)
            }
        }
        ramps[h].setTarget(shelfCoefficients(shelves), steps: steps, snap: snap)
        // The high shelf runs as a low shelf of the inverse gain times its gain, here.
        let total = broadbandDecibels.lowHalf + shelves.highHalf
        let linear = fastExp2(SIMD4(lowHalf: total, highHalf: total) * SIMD4(repeating: 0.166_096_404_744_368))
        let target = SIMD4(lowHalf: SIMD2<Float>(), highHalf: linear.lowHalf)
        let state = broadband + 2 &* pair
        if snap {
            state[0] = target
            state[1] = SIMD4()
        } else {
            state[1] = (target - state[0]) * steps
        }
    }

    /// One step of the bell-gain iteration `s ← s + M·(target − model(s))` (see
    /// `EqualizerDesign`), in band-vector lanes. Real-time safe: fixed-size loops on scratch.
    @inline(__always)
    private func iterateBells(_ gains: UnsafeMutablePointer<SIMD4<Float>>, targets: UnsafePointer<SIMD4<Float>>,
                              broadband: SIMD4<Float>, shelves: SIMD4<Float>) {
        let half = PersonalizationImage.maximumHalfCount, h = image.halfCount
        let decibelsToLog2 = SIMD4<Float>(repeating: 0.166_096_404_744_368)
        let t = scratch + half, swappedT = scratch + 2 &* half
        let oneMinusT = scratch + 3 &* half, swappedOneMinusT = scratch + 4 &* half, errors = scratch + 5 &* half
        var gainSum = SIMD4<Float>()
        for σ in 0..<h {
            let value = fastExp2(gains[σ] * decibelsToLog2)
            t[σ] = value
            swappedT[σ] = SIMD4(lowHalf: value.highHalf, highHalf: value.lowHalf)
            oneMinusT[σ] = 1 - value
            swappedOneMinusT[σ] = 1 - swappedT[σ]
            gainSum += gains[σ]
        }
        // Σ of every section's gain per ear (the `s/2` parts of the terms), in all lanes.
        let earSum = gainSum.lowHalf + gainSum.highHalf + shelves.lowHalf + shelves.highHalf
        let halfSum = 0.5 * SIMD4(lowHalf: earSum, highHalf: earSum)
        let shelfT = fastExp2(shelves * decibelsToLog2)
        let lowT = SIMD4(lowHalf: shelfT.lowHalf, highHalf: shelfT.lowHalf)
        let highT = SIMD4(lowHalf: shelfT.highHalf, highHalf: shelfT.highHalf)
        for κ in 0..<h {
            var numerator = SIMD4<Float>(repeating: 1), denominator = SIMD4<Float>(repeating: 1)
            for σ in 0..<h {
                let w = image.uSame[κ &* half &+ σ] * oneMinusT[σ]
                numerator *= t[σ] + w
                denominator *= 1 - w
                let v = image.uCross[κ &* half &+ σ] * swappedOneMinusT[σ]
                numerator *= swappedT[σ] + v
                denominator *= 1 - v
            }
            let wLow = image.uLow[κ] * (1 - lowT), wHigh = image.uHigh[κ] * (1 - highT)
            numerator *= (lowT + wLow) * (highT + wHigh)
            denominator *= (1 - wLow) * (1 - wHigh)
            let model = halfSum + SIMD4(repeating: 3.010_299_956_6) * fastLog2(numerator / denominator)
            errors[κ] = targets[κ] - broadband - model
        }
        let limit = SIMD4<Float>(repeating: Float(EqualizerDesign.sectionGainLimit))
        for σ in 0..<h {
            var step = SIMD4<Float>()
            for κ in 0..<h {
                let e = errors[κ]
                step += image.interactionSame[σ &* half &+ κ] * e
                step += image.interactionCross[σ &* half &+ κ] * SIMD4(lowHalf: e.highHalf, highHalf: e.lowHalf)
            }
            gains[σ] = minimum(maximum(gains[σ] + step, -limit), limit)
        }
    }

    /// The loop coefficients of bell vector `σ` at `gains` dB (Simper's bell: `k = 1/(Q·A)`,
    /// `m1 = k·(A² − 1)`).
    @inline(__always)
    private func bellCoefficients(_ σ: Int, gains: SIMD4<Float>) -> SectionRamp {
        let a = fastExp2(gains * SIMD4(repeating: 0.083_048_202_372_184))   // log2(10)/40
        let g = image.bells[2 &* σ], k = image.bells[2 &* σ &+ 1] / a
        let gk = g * (g + k), a1 = 1 / (1 + gk)
        var ramp = SectionRamp()
        ramp.c11 = -2 * gk * a1
        ramp.c12 = 2 * g * a1
        ramp.c22 = g * ramp.c12
        ramp.h1 = 0.5 * k * (a * a - 1)
        return ramp
    }

    /// The loop coefficients of the shelf vector: Butterworth low shelves (Simper's form,
    /// `g = g₀/√A`, `m1 = k·(A − 1)`, `m2 = A² − 1`) with the low shelf's gain and the inverse of
    /// the high shelf's.
    @inline(__always)
    private func shelfCoefficients(_ shelves: SIMD4<Float>) -> SectionRamp {
        let gains = SIMD4(lowHalf: shelves.lowHalf, highHalf: -shelves.highHalf)
        let a = fastExp2(gains * SIMD4(repeating: 0.083_048_202_372_184))
        let rootA = fastExp2(gains * SIMD4(repeating: 0.041_524_101_186_092))
        let g = image.shelfG / rootA, k = SIMD4<Float>(repeating: Float(EqualizerDesign.shelfDamping))
        let gk = g * (g + k), a1 = 1 / (1 + gk)
        var ramp = SectionRamp()
        ramp.c11 = -2 * gk * a1
        ramp.c12 = 2 * g * a1
        ramp.c22 = g * ramp.c12
        ramp.h1 = 0.5 * k * (a - 1)
        ramp.h2 = 0.5 * (a * a - 1)
        return ramp
    }

    /// Runs one channel pair over `count` frames of the current control period.
    @inline(__always)
    private func runPair(_ pair: Int, _ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, start: Int, count: Int,
                         wet: UnsafePointer<Float>?) {
        let half = PersonalizationImage.maximumHalfCount, h = image.halfCount
        let period = PersonalizationImage.controlPeriod
        let first = buffers[2 &* pair] + start
        let second: UnsafeMutablePointer<Float>? = 2 &* pair &+ 1 < spec.channelCount ? buffers[2 &* pair &+ 1] + start : nil
        let secondInput: UnsafePointer<Float>? = if let second { UnsafePointer(second) } else { nil }
        let input = UnsafePointer(slots)
        let analysis = analysisStates + 2 &* half &* pair, detectors = bandStates + half &* pair
        let sections = PersonalizationImage.maximumSectionVectors
        let gain = broadband + 2 &* pair
        if simdPath == .avx2FMA {
            // The C kernels interleave on the way in and, for a stereo pair without a cross-fade,
            // write the channels on the way out (one pass less over the period each).
            simdAnalyzeAVX2FMA(first, secondInput, into: slots, count: count, bandVectors: h, period: period,
                               filters: UnsafePointer(image.analysis), states: analysis,
                               weights: UnsafePointer(image.weights + 2 &* periodPosition), detectors: detectors)
            if wet == nil, let second {
                simdCascadeAVX2FMA(slots, count: count, vectors: h &+ 1, ramps: ramps + sections &* pair,
                                   states: cascadeStates + 3 &* sections &* pair, outputs: (first, second, gain))
                return
            }
            simdCascadeAVX2FMA(slots, count: count, vectors: h &+ 1, ramps: ramps + sections &* pair,
                               states: cascadeStates + 3 &* sections &* pair)
        } else {
            PersonalizationKernels.interleave(first, secondInput, count: count, into: slots)
            var b = 0
            while b < h {
                let weights = UnsafePointer(image.weights + 2 &* (b &* period &+ periodPosition))
                if b &+ 1 < h {
                    PersonalizationKernels.analyze2(
                        input, count: count, filters: UnsafePointer(image.analysis + 4 &* b), states: analysis + 2 &* b,
                        weights: weights, otherWeights: weights + 2 &* period, detectors: detectors + b)
                    b &+= 2
                } else {
                    PersonalizationKernels.analyze1(
                        input, count: count, filters: UnsafePointer(image.analysis + 4 &* b), states: analysis + 2 &* b,
                        weights: weights, detector: detectors + b)
                    b &+= 1
                }
            }
            PersonalizationKernels.cascade(slots, count: count, vectors: h &+ 1, ramps: ramps + sections &* pair,
                                           states: cascadeStates + 3 &* sections &* pair)
        }
        PersonalizationKernels.deinterleave(input, count: count, broadband: &gain[0], broadbandStep: gain[1],
                                            wet: wet, first, second)
    }
}

extension PersonalizationProcessor: @unchecked Sendable {}
