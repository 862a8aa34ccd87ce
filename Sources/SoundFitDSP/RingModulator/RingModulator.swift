/// The ring modulator stage: `out = (1 - mix)·x + mix·x·|sin(2π·f·t)|`, f in 15…40 Hz.
///
/// The modulator comes from an exact integer phase accumulator (`ModulatorPhase`), so it is
/// continuous across buffers and frequency changes and does not drift over hours. It is computed
/// once per sample into a preallocated buffer and shared by all channels, which then cost one
/// multiply per sample. `mix` moves linearly over 20 ms; enabling resets the phase and fades in
/// over 10 ms, disabling fades out over 10 ms and then skips the stage (buffers untouched).
///
/// Threads: `init` allocates and must not run on the audio thread; every other method is
/// real-time safe and may be called on the audio thread by the one owner of the value.
public struct RingModulator: ~Copyable {
    /// Duration of a mix move.
    public static var mixRampSeconds: Double { 0.020 }
    /// Duration of the enable/disable cross-fade.
    public static var bypassFadeSeconds: Double { 0.010 }

    public private(set) var spec: ProcessingSpec
    /// The current targets (clamped into range).
    public private(set) var settings: RingModulatorSettings
    /// The modulator's phase accumulator.
    public private(set) var phase: ModulatorPhase

    /// Per-sample multiplier `1 - d + d·|sin|` for the current chunk.
    private let weights: UnsafeMutablePointer<Float>
    /// Per-sample enable fade, then the modulator phases, of the current chunk.
    private let fades: UnsafeMutablePointer<Float>
    private var mix: LinearRamp
    private var enable: LinearRamp
    private var mixRampSamples = 1
    private var bypassFadeSamples = 1
    private var bypassed: Bool

    /// Prepares the modulator for `spec`, starting at `settings` (no ramp from defaults) with
    /// phase 0. Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: RingModulatorSettings = RingModulatorSettings()) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        // Whole SIMD8 groups (see `fillModulator`).
        let capacity = (spec.maximumFrameCount + 7) / 8 * 8
        weights = .allocate(capacity: capacity)
        weights.initialize(repeating: 1, count: capacity)
        fades = .allocate(capacity: capacity)
        fades.initialize(repeating: 1, count: capacity)
        phase = ModulatorPhase()
        mix = LinearRamp(value: Double(settings.mix))
        enable = LinearRamp(value: settings.isEnabled ? 1 : 0)
        bypassed = !settings.isEnabled
        updateRates()
    }

    deinit {
        weights.deallocate()
        fades.deallocate()
    }

    /// True when the stage currently leaves the buffers untouched (disabled and faded out).
    public var isBypassed: Bool { bypassed }

    /// Changes the sample rate: recomputes the phase increment and ramp lengths and resets.
    /// Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        spec.sampleRate = sampleRate
        updateRates()
        reset()
    }

    /// Phase back to 0, smoothers at their targets. Real-time safe.
    public mutating func reset() {
        phase.rawValue = 0
        mix.snapToTarget()
        enable.snap(to: settings.isEnabled ? 1 : 0)
        bypassed = !settings.isEnabled
    }

    /// Sets new targets: the frequency changes at once (phase-continuous), mix moves over 20 ms,
    /// enabling resets the phase and fades in, disabling fades out. Real-time safe.
    public mutating func apply(_ newSettings: RingModulatorSettings) {
        let target = newSettings.clamped()
        guard target != settings else { return }
        let previous = settings
        settings = target
        if target.frequency != previous.frequency { updateRates() }
        if bypassed {
            if target.isEnabled {
                phase.rawValue = 0
                mix.snap(to: Double(target.mix))
                enable.snap(to: 0)
                enable.setTarget(1, steps: bypassFadeSamples)
                bypassed = false
            }
            return
        }
        if target.mix != previous.mix { mix.setTarget(Double(target.mix), steps: mixRampSamples) }
        if target.isEnabled != previous.isEnabled {
            enable.setTarget(target.isEnabled ? 1 : 0, steps: bypassFadeSamples)
        }
    }

    /// Advances the modulator by `frames` samples without processing audio (exact).
    /// Real-time safe.
    public mutating func advance(frames: Int) {
        phase.advance(frames: frames)
    }

    /// Modulates `spec.channelCount` non-interleaved channels in place. Any `frameCount >= 0`.
    /// Real-time safe: may be called on the audio thread.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var chunkStart = 0
        while chunkStart < frameCount && !bypassed {
            let count = min(frameCount &- chunkStart, spec.maximumFrameCount)
            processChunk(buffers, chunkStart: chunkStart, count: count)
            chunkStart &+= count
        }
    }

    private mutating func updateRates() {
        phase.increment = ModulatorPhase.increment(frequency: Double(settings.frequency), sampleRate: spec.sampleRate)
        let sampleSeconds = 1 / spec.sampleRate
        mixRampSamples = LinearRamp.steps(forSeconds: Self.mixRampSeconds, stepSeconds: sampleSeconds)
        bypassFadeSamples = LinearRamp.steps(forSeconds: Self.bypassFadeSeconds, stepSeconds: sampleSeconds)
    }

    private mutating func processChunk(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>,
                                       chunkStart: Int, count: Int) {
        let steadyDepth = !mix.isRamping && !enable.isRamping
        if steadyDepth && mix.value * enable.value == 0 {
            // Dry: the multiplier would be exactly 1. Keep the modulator running.
            phase.advance(frames: count)
            if enable.value == 0 { bypassed = true }
            return
        }
        // Depth d = mix · enable per sample, then the multiplier 1 - d + d·|sin|.
        mix.fill(weights, count: count)
        if enable.isRamping {
            enable.fill(fades, count: count)
            multiplyInPlace(weights, by: fades, count: count)
        } else if enable.value != 1 {
            scaleInPlace(weights, count: count, by: Float(enable.value))
        }
        phase.rawValue = Self.fillModulator(weights, scratch: fades, count: count, phase: phase)
        for channel in 0..<spec.channelCount {
            multiplyInPlace(buffers[channel] + chunkStart, by: weights, count: count)
        }
        if !enable.isRamping && enable.value == 0 { bypassed = true }
    }

    /// `weights[i] = 1 - d + d·|sin(2π·phase_i)|` with `d = weights[i]` on entry (using
    /// `scratch` for the phases); returns the phase after the chunk. Both buffers hold whole
    /// SIMD8 groups, so the last partial group is computed like any other (the lanes past
    /// `count` are scratch), and each sample's value does not depend on how calls split the signal.
    @inline(__always)
    private static func fillModulator(_ weights: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
                                      count: Int, phase: ModulatorPhase) -> UInt64 {
        var p = phase.rawValue
        let increment = phase.increment
        for i in 0..<count {
            scratch[i] = ModulatorPhase.halfCycleFraction(p)
            p &+= increment
        }
        let rawWeights = UnsafeMutableRawPointer(weights)
        let rawScratch = UnsafeRawPointer(scratch)
        let stride = MemoryLayout<Float>.stride
        var i = 0
        while i < count {
            let offset = i &* stride
            let modulator = ModulatorPhase.absoluteSine(
                halfCycleFractions: rawScratch.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self))
            let depth = rawWeights.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            rawWeights.storeBytes(of: (1 - depth) + depth * modulator, toByteOffset: offset, as: SIMD8<Float>.self)
            i &+= 8
        }
        return p
    }
}

extension RingModulator: @unchecked Sendable {}
