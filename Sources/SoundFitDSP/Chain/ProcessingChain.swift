/// The whole processing chain of one SoundFit instance:
///
///     personalization -> filter -> ring modulator -> output gain
///
/// It copies the inputs to the outputs chunk by chunk (at most `spec.maximumFrameCount` frames)
/// and runs each stage in place on the outputs. A stage that is disabled (and faded out), or an
/// output gain at exactly 0 dB, leaves the samples untouched, so a fully bypassed chain is a
/// bit-exact copy.
///
/// Threads: `init` allocates and must not run on the audio thread. `setSampleRate`, `reset`,
/// `apply`, `settings`, `process` and the personalization preset calls (`installPersonalization`,
/// `removePersonalization`, `setPersonalizationTechLevel`) are real-time safe (no allocation,
/// locks, I/O, reference counting or runtime calls) and may be called on the audio thread; the
/// value has one owner at a time. Prepared presets are built and released on the control side
/// (see `PreparedPersonalization`).
public struct ProcessingChain: ~Copyable {
    public private(set) var spec: ProcessingSpec
    /// The current targets (each value clamped into its range).
    public private(set) var settings: ChainSettings

    // MARK: Stage 0 — personalization
    // The multiband personalization processor (per-ear band gains and dynamics from a hearing
    // profile); see `PersonalizationProcessor`. Its preset arrives as a `PreparedPersonalization`.
    private var personalization: PersonalizationProcessor

    private var filter: BiquadFilter
    private var ringModulator: RingModulator
    private var outputGain: OutputGain
    // Last — the output safety limit, one per ear: always on, whatever the other stages do
    // (bypassed ones too); transparent below its ceiling, no latency. No limit until
    // `setOutputCeiling` or `setOutputCeilings` is called.
    private var outputLimiter: OutputLimiter
    /// Output channel pointers offset to the current chunk.
    private let chunkPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// `isPassthrough` as the last chunk left it: `process` then copies and limits without
    /// visiting the other stages, so a bypassed cycle touches less memory on the audio thread.
    /// Cleared by every call that can wake a stage.
    private var passthrough = false

    /// Prepares every stage for `spec`, starting at `settings` (no ramp from defaults), with no
    /// personalization preset; the personalization stage accepts presets of
    /// `personalizationTechLevel` (1…4). Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: ChainSettings = ChainSettings(), personalizationTechLevel: Int = 3) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        personalization = PersonalizationProcessor(spec: spec, settings: settings.personalization,
                                                   techLevel: personalizationTechLevel)
        filter = BiquadFilter(spec: spec, settings: settings.filter)
        ringModulator = RingModulator(spec: spec, settings: settings.ringModulator)
        outputGain = OutputGain(spec: spec, settings: settings.outputGain)
        outputLimiter = OutputLimiter(sampleRate: spec.sampleRate)
        chunkPointers = .allocate(capacity: spec.channelCount)
        chunkPointers.initialize(repeating: UnsafeMutablePointer(bitPattern: 0x10)!, count: spec.channelCount)
    }

    deinit {
        chunkPointers.deallocate()
    }

    /// True when `process` currently is a plain copy: every stage bypassed or at unity.
    public var isPassthrough: Bool {
        personalization.isBypassed && filter.isBypassed && ringModulator.isBypassed && outputGain.isUnity
    }

    // MARK: Meters

    /// The personalization's bands that `personalizationBandMeter` reads (0 while bypassed).
    public var meteredBandCount: Int { personalization.meteredBandCount }

    /// See `PersonalizationProcessor.bandMeter(channel:band:)`. Real-time safe.
    public func personalizationBandMeter(channel: Int, band: Int) -> (gain: Float, reduction: Float) {
        personalization.bandMeter(channel: channel, band: band)
    }

    // MARK: Personalization presets

    /// The tech level whose personalization presets the chain accepts.
    public var personalizationTechLevel: Int { personalization.techLevel }

    /// The installed personalization preset (compare with `toOpaque()`), or nil.
    public var installedPersonalization: Unmanaged<PreparedPersonalization>? { personalization.installed }

    /// True when the personalization stage currently leaves the buffers untouched.
    public var isPersonalizationBypassed: Bool { personalization.isBypassed }

    /// Installs a preset prepared off the audio thread and hands back the one it replaces (or the
    /// new one itself, rejected, when its tech level or sample rate differ from the chain's). The
    /// band gains move to the new preset over 50 ms. Never retains or releases: the caller
    /// releases whatever comes back on the control side. Real-time safe.
    public mutating func installPersonalization(_ prepared: Unmanaged<PreparedPersonalization>) -> PersonalizationInstallResult {
        passthrough = false
        return personalization.install(prepared)
    }

    /// Removes the personalization preset (the stage fades out over 15 ms and then passes the
    /// input through) and hands it back for release on the control side. Real-time safe.
    public mutating func removePersonalization() -> Unmanaged<PreparedPersonalization>? {
        passthrough = false
        return personalization.removePreset()
    }

    /// Accepts presets of another tech level from now on (a new session). An installed preset is
    /// removed at once, without a fade, and handed back. Real-time safe.
    public mutating func setPersonalizationTechLevel(_ techLevel: Int) -> Unmanaged<PreparedPersonalization>? {
        passthrough = false
        return personalization.setTechLevel(techLevel)
    }

    /// Changes the sample rate of every stage: coefficients and ramp lengths are recomputed,
    /// states cleared. An installed personalization preset prepared for another rate stops
    /// applying until one for the new rate is installed. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        spec.sampleRate = sampleRate
        passthrough = false
        personalization.setSampleRate(sampleRate)
        filter.setSampleRate(sampleRate)
        ringModulator.setSampleRate(sampleRate)
        outputGain.setSampleRate(sampleRate)
        outputLimiter.setSampleRate(sampleRate)
    }

    /// The output safety limit's ceiling for both ears (linear peak, `.infinity` = none).
    /// Real-time safe.
    public mutating func setOutputCeiling(_ ceiling: Float) {
        setOutputCeilings(left: ceiling, right: ceiling)
    }

    /// Each ear's output safety limit (linear peak, `.infinity` = none; channels in pairs, first
    /// of a pair left, mono left). Real-time safe.
    public mutating func setOutputCeilings(left: Float, right: Float) {
        if left != outputLimiter.left.ceiling || right != outputLimiter.right.ceiling {
            outputLimiter.setCeilings(left: left, right: right)
        }
    }

    /// Each ear's ceiling now (linear peak).
    public var outputCeilings: (left: Float, right: Float) { (outputLimiter.left.ceiling, outputLimiter.right.ceiling) }

    /// Runs only the output safety limit on `outputs` (the hearing test's stimulus replaces the
    /// other stages, the limit holds in every mode). Any frame count. Real-time safe.
    public mutating func limitOutput(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        outputLimiter.process(outputs, channelCount: spec.channelCount, frameCount: frameCount)
    }

    /// The smallest gain the output limit applied since the last call (1 = nothing limited).
    /// Real-time safe.
    public mutating func takeOutputLimitReduction() -> Float {
        outputLimiter.takeLargestReduction()
    }

    /// Clears filter states, resets the modulator phase and jumps every smoother to its target.
    /// Real-time safe.
    public mutating func reset() {
        passthrough = false
        personalization.reset()
        filter.reset()
        ringModulator.reset()
        outputGain.reset()
    }

    /// Sets new targets for every stage. Moves are smoothed, enabling and disabling a stage
    /// cross-fades. Real-time safe.
    public mutating func apply(_ newSettings: ChainSettings) {
        let target = newSettings.clamped()
        guard target != settings else { return }
        settings = target
        passthrough = false
        personalization.apply(target.personalization)
        filter.apply(target.filter)
        ringModulator.apply(target.ringModulator)
        outputGain.apply(target.outputGain)
    }

    /// Processes `frameCount` frames (any count `>= 0`) from `inputs` to `outputs`, each holding
    /// `spec.channelCount` non-interleaved channel pointers (like JACK port buffers). An output
    /// may be the same buffer as its own input (in place); otherwise outputs must not overlap
    /// inputs. Real-time safe: may be called on the audio thread.
    public mutating func process(inputs: UnsafePointer<UnsafePointer<Float>>,
                                 outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                                 frameCount: Int) {
        let channelCount = spec.channelCount
        var chunkStart = 0
        while chunkStart < frameCount {
            let count = min(frameCount &- chunkStart, spec.maximumFrameCount)
            for channel in 0..<channelCount {
                let destination = outputs[channel] + chunkStart
                copyFloats(from: inputs[channel] + chunkStart, to: destination, count: count)
                chunkPointers[channel] = destination
            }
            if passthrough {
                outputLimiter.process(UnsafePointer(chunkPointers), channelCount: channelCount, frameCount: count)
            } else {
                processChunk(count: count)
                passthrough = isPassthrough
            }
            chunkStart &+= count
        }
    }

    /// Runs the stages in place on `chunkPointers`. A stage that would leave the samples untouched
    /// is not called (the same checks its `process` starts with), so its code stays out of the
    /// cycle.
    private mutating func processChunk(count: Int) {
        let buffers = UnsafePointer(chunkPointers)
        if !personalization.isBypassed { personalization.process(buffers, frameCount: count) }
        if !filter.isBypassed { filter.process(buffers, frameCount: count) }
        if !ringModulator.isBypassed { ringModulator.process(buffers, frameCount: count) }
        if !outputGain.isUnity { outputGain.process(buffers, frameCount: count) }
        outputLimiter.process(buffers, channelCount: spec.channelCount, frameCount: count)
    }
}

extension ProcessingChain: @unchecked Sendable {}
