/// Stage 0 of the chain: the multiband personalization processor (per-ear band gains with wide
/// dynamic range compression, expansion and a per-band limiter) on an LR4 crossover tree.
///
/// **Channels.** Channels are processed in pairs (1+2, 3+4, …): the first of a pair (odd
/// channel numbers, counting from 1) gets the left ear's preset, the second the right ear's. Mono
/// gets the left ear; a lone last channel of an odd count is processed with the left ear too.
///
/// **Filterbank.** `CrossoverTreeDesign`: an LR4 tree with all-pass compensation whose bands sum
/// to one all-pass `A(z)` (flat magnitude, group delay of the crossovers, no block latency). Each
/// band is multiplied by its gain and the bands are summed.
///
/// **Dynamics.** Each band's level comes from a power detector: x² is pre-smoothed by two
/// one-poles (0.5…6 ms, against the ripple of x²) and evaluated once per control period
/// (`PersonalizationImage.controlPeriod` = 32 samples) through an attack/release one-pole with the
/// preset's time constants. Band powers are calibrated so that a sine at the band centre reads its
/// own level (`MultibandPreset.calibration` = dB SPL of a full-scale sine). The gain law
/// (`BandDynamics.gain(atLevel:)`, plus the preset's fitting offset) is evaluated per period and
/// the linear band gain interpolated per sample toward it.
///
/// **Intensity.** Each band's linear gain becomes `1 + i·(g − 1)`; `i` moves over 30 ms. Since
/// the bank is an all-pass, intensity 0 would leave `A(z)·x`, not `x`: when the intensity has
/// arrived at 0 the processor cross-fades to the dry input over 15 ms and then skips the bank, so
/// intensity 0 is bit-exact transparent. Leaving 0 fades the bank back in (from unity gains, so
/// the fade only turns the phase of the all-pass in).
///
/// **Enable.** Disabling cross-fades to the dry input over 15 ms, then the stage is skipped (the
/// buffers are untouched, bit for bit). Enabling resets filter states, starts every detector at
/// its band's reference level and fades in. Without an installed preset the stage is skipped.
///
/// **Presets.** `install(_:)` takes a `PreparedPersonalization` (built off the audio thread),
/// copies its image and hands the previous one back. The tree is the same for every preset of a
/// tech level and sample rate, so the filter states carry on; the band gains move from their
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

    private var image: PersonalizationImage
    /// True while `image` holds a preset for the current sample rate and it is wanted.
    private var hasPreset = false
    private let pairCount: Int
    /// Per pair: `maximumStates` state pairs (two SIMD4 each).
    private let treeStates: UnsafeMutablePointer<SIMD4<Float>>
    /// Per pair: `maximumHalfCount` band states.
    private let bandStates: UnsafeMutablePointer<BandState>
    /// `maximumSlots` signal slots of one control period, plus the output sum.
    private let slots: UnsafeMutablePointer<SIMD4<Float>>
    private let output: UnsafeMutablePointer<SIMD4<Float>>
    private let wetBuffer: UnsafeMutablePointer<Float>

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
    private var bypassed = true

    /// Prepares the processor for `spec` (storage for the largest tech level), starting at
    /// `settings` with no preset. Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: PersonalizationSettings = PersonalizationSettings(), techLevel: Int = 3) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        precondition(MultibandLayout.techLevels.contains(techLevel), "tech level must be 1…4")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        self.techLevel = techLevel
        image = PersonalizationImage.allocate()
        pairCount = (spec.channelCount + 1) / 2
        let stateCount = 2 * PersonalizationImage.maximumStates * pairCount
        treeStates = .allocate(capacity: stateCount)
        treeStates.initialize(repeating: SIMD4(), count: stateCount)
        bandStates = .allocate(capacity: PersonalizationImage.maximumHalfCount * pairCount)
        bandStates.initialize(repeating: BandState(), count: PersonalizationImage.maximumHalfCount * pairCount)
        let period = PersonalizationImage.controlPeriod
        slots = .allocate(capacity: PersonalizationImage.maximumSlots * period)
        slots.initialize(repeating: SIMD4(), count: PersonalizationImage.maximumSlots * period)
        output = .allocate(capacity: period)
        output.initialize(repeating: SIMD4(), count: period)
        wetBuffer = .allocate(capacity: period)
        wetBuffer.initialize(repeating: 1, count: period)
        intensity = LinearRamp(value: Double(settings.intensity))
        wet = LinearRamp(value: 0)
        updateRampLengths()
    }

    deinit {
        image.deallocate()
        treeStates.deallocate()
        bandStates.deallocate()
        slots.deallocate()
        output.deallocate()
        wetBuffer.deallocate()
    }

    /// True when `process` currently leaves the buffers untouched.
    public var isBypassed: Bool { bypassed }

    /// True when a preset for the current tech level and sample rate is installed.
    public var hasInstalledPreset: Bool { hasPreset }

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
            image.copy(from: newImage)
            hasPreset = true
            for pair in 0..<pairCount {
                for b in 0..<image.halfCount {
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

    /// Zero filter states; detectors at each band's reference level; gains computed afresh.
    private mutating func clearStates() {
        treeStates.update(repeating: SIMD4(), count: 2 * PersonalizationImage.maximumStates * pairCount)
        for pair in 0..<pairCount {
            for b in 0..<PersonalizationImage.maximumHalfCount {
                var state = BandState()
                if b < image.halfCount {
                    let reference = image.laws[b].referencePower
                    state.e1 = reference
                    state.e2 = reference
                    state.envelope = reference
                }
                bandStates[pair &* PersonalizationImage.maximumHalfCount &+ b] = state
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

    /// Levels and gains of every band of every pair, once per control period.
    private mutating func controlUpdate() {
        if !wet.isRamping && wet.value == 1 && !wantsWet { wet.setTarget(0, steps: fadeSamples) }
        let i = SIMD4<Float>(repeating: Float(intensity.step()))
        let presetShare = SIMD4<Float>(repeating: Float(presetRamp.step()))
        let snap = snapGains
        snapGains = false
        let step = SIMD4<Float>(repeating: 1 / Float(PersonalizationImage.controlPeriod))
        let decibelsToLog2 = SIMD4<Float>(repeating: 0.166_096_404_744_368)   // log2(10)/20
        for pair in 0..<pairCount {
            let states = bandStates + pair &* PersonalizationImage.maximumHalfCount
            for b in 0..<image.halfCount {
                let law = image.laws[b]
                var s = states[b]
                let e1 = s.e1
                s.e1 = law.preDecay * e1 + s.sum1
                s.e2 = law.preDecay * s.e2 + law.preCross * e1 + s.sum2
                s.sum1 = SIMD4()
                s.sum2 = SIMD4()
                let coefficient = law.release.replacing(with: law.attack, where: s.e2 .> s.envelope)
                s.envelope += coefficient * (s.e2 - s.envelope)
                s.level = law.level(ofPower: s.envelope)
                s.gainDecibels = law.gain(atLevel: s.level) + s.presetOffset * presetShare
                let linear = fastExp2(s.gainDecibels * decibelsToLog2)
                let target = 1 + i * (linear - 1)
                if snap {
                    s.gain = target
                    s.gainStep = SIMD4()
                } else {
                    s.gainStep = (target - s.gain) * step
                }
                states[b] = s
            }
        }
    }

    /// Runs one channel pair over `count` frames of the current control period.
    @inline(__always)
    private func runPair(_ pair: Int, _ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, start: Int, count: Int,
                         wet: UnsafePointer<Float>?) {
        let period = PersonalizationImage.controlPeriod
        let first = buffers[2 &* pair] + start
        let second: UnsafeMutablePointer<Float>? = 2 &* pair &+ 1 < spec.channelCount ? buffers[2 &* pair &+ 1] + start : nil
        let secondInput: UnsafePointer<Float>? = if let second { UnsafePointer(second) } else { nil }
        PersonalizationKernels.interleave(first, secondInput, count: count, into: slots)
        let states = treeStates + 2 &* PersonalizationImage.maximumStates &* pair
        for index in 0..<image.opCount {
            let op = image.ops[index]
            let slot = slots + op.slot &* period
            let coefficients = UnsafePointer(image.coefficients + 3 &* op.coefficients)
            let opStates = states + 2 &* op.states
            switch op.kind {
            case .rootSplit:
                PersonalizationKernels.split(slot, high: slot, count: count, coefficients: coefficients, states: opStates, root: true)
            case .split:
                PersonalizationKernels.split(slot, high: slots + op.highSlot &* period, count: count,
                                             coefficients: coefficients, states: opStates, root: false)
            case .allpass:
                PersonalizationKernels.allpass(slot, count: count, chain: op.count, coefficients: coefficients, states: opStates)
            }
        }
        let bandStates = self.bandStates + pair &* PersonalizationImage.maximumHalfCount
        for b in 0..<image.halfCount {
            PersonalizationKernels.band(UnsafePointer(slots + image.bandSlots[b] &* period), output: output, count: count,
                                        weights: UnsafePointer(image.weights + 2 &* (b &* period &+ periodPosition)),
                                        state: bandStates + b, first: b == 0)
        }
        PersonalizationKernels.deinterleave(UnsafePointer(output), count: count, wet: wet, first, second)
    }
}

extension PersonalizationProcessor: @unchecked Sendable {}
