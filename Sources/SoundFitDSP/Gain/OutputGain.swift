/// The output gain stage, in dB (−60…+12).
///
/// The linear gain moves per sample over 20 ms after a change. At exactly 0 dB and not moving
/// the stage does nothing (exact unity, no multiply). Disabling cross-fades to unity over 10 ms
/// and then skips the stage; enabling fades from unity to the gain.
///
/// Threads: `init` allocates and must not run on the audio thread; every other method is
/// real-time safe and may be called on the audio thread by the one owner of the value.
public struct OutputGain: ~Copyable {
    /// Duration of a gain move.
    public static var gainRampSeconds: Double { 0.020 }
    /// Duration of the enable/disable cross-fade.
    public static var bypassFadeSeconds: Double { 0.010 }

    public private(set) var spec: ProcessingSpec
    /// The current targets (clamped into range).
    public private(set) var settings: OutputGainSettings

    private let gains: UnsafeMutablePointer<Float>
    private let fades: UnsafeMutablePointer<Float>
    /// Linear amplitude.
    private var gain: LinearRamp
    private var enable: LinearRamp
    private var gainRampSamples = 1
    private var bypassFadeSamples = 1

    /// Prepares the stage for `spec`, starting at `settings` (no ramp from defaults).
    /// Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: OutputGainSettings = OutputGainSettings()) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        gains = .allocate(capacity: spec.maximumFrameCount)
        gains.initialize(repeating: 1, count: spec.maximumFrameCount)
        fades = .allocate(capacity: spec.maximumFrameCount)
        fades.initialize(repeating: 1, count: spec.maximumFrameCount)
        gain = LinearRamp(value: Decibels.amplitude(Double(settings.gain)))
        enable = LinearRamp(value: settings.isEnabled ? 1 : 0)
        updateRampLengths()
    }

    deinit {
        gains.deallocate()
        fades.deallocate()
    }

    /// The linear gain the stage applies now (1 when bypassed).
    public var currentAmplitude: Double { 1 + enable.value * (gain.value - 1) }

    /// True when the stage currently leaves the buffers untouched: disabled, or at exactly
    /// 0 dB, and not moving.
    public var isUnity: Bool { !gain.isRamping && !enable.isRamping && currentAmplitude == 1 }

    /// Changes the sample rate (ramp lengths) and resets. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        spec.sampleRate = sampleRate
        updateRampLengths()
        reset()
    }

    /// Jumps the smoothers to their targets. Real-time safe.
    public mutating func reset() {
        gain.snapToTarget()
        enable.snapToTarget()
    }

    /// Sets new targets: the gain moves over 20 ms, enabling or disabling cross-fades over
    /// 10 ms. Real-time safe.
    public mutating func apply(_ newSettings: OutputGainSettings) {
        let target = newSettings.clamped()
        guard target != settings else { return }
        let previous = settings
        settings = target
        let amplitude = Decibels.amplitude(Double(target.gain))
        if !previous.isEnabled && !enable.isRamping {
            // Bypassed: not audible, so the gain can jump; enabling then fades in.
            gain.snap(to: amplitude)
        } else if target.gain != previous.gain {
            gain.setTarget(amplitude, steps: gainRampSamples)
        }
        if target.isEnabled != previous.isEnabled {
            enable.setTarget(target.isEnabled ? 1 : 0, steps: bypassFadeSamples)
        }
    }

    /// Scales `spec.channelCount` non-interleaved channels in place. Any `frameCount >= 0`.
    /// Real-time safe: may be called on the audio thread.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var chunkStart = 0
        while chunkStart < frameCount {
            if !enable.isRamping && enable.value == 0 {
                // Disabled and faded out: unity; a gain move still running is not heard.
                gain.snapToTarget()
                return
            }
            if !gain.isRamping && !enable.isRamping {
                // Steady for the rest of the call.
                let amplitude = Float(currentAmplitude)
                guard amplitude != 1 else { return }
                let count = frameCount &- chunkStart
                for channel in 0..<spec.channelCount {
                    scaleInPlace(buffers[channel] + chunkStart, count: count, by: amplitude)
                }
                return
            }
            let count = min(frameCount &- chunkStart, spec.maximumFrameCount)
            gain.fill(gains, count: count)
            if enable.isRamping {
                enable.fill(fades, count: count)
                blendTowardUnity(gains, fade: fades, count: count)
            }
            for channel in 0..<spec.channelCount {
                multiplyInPlace(buffers[channel] + chunkStart, by: gains, count: count)
            }
            chunkStart &+= count
        }
    }

    private mutating func updateRampLengths() {
        let sampleSeconds = 1 / spec.sampleRate
        gainRampSamples = LinearRamp.steps(forSeconds: Self.gainRampSeconds, stepSeconds: sampleSeconds)
        bypassFadeSamples = LinearRamp.steps(forSeconds: Self.bypassFadeSeconds, stepSeconds: sampleSeconds)
    }
}

extension OutputGain: @unchecked Sendable {}
