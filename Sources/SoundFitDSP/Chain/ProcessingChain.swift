/// The whole processing chain of one SoundFit instance:
///
///     personalization (reserved, a later issue) -> filter -> ring modulator -> output gain
///
/// It copies the inputs to the outputs chunk by chunk (at most `spec.maximumFrameCount` frames)
/// and runs each stage in place on the outputs. A stage that is disabled (and faded out), or an
/// output gain at exactly 0 dB, leaves the samples untouched, so a fully bypassed chain is a
/// bit-exact copy.
///
/// Threads: `init` allocates and must not run on the audio thread. `setSampleRate`, `reset`,
/// `apply`, `settings` and `process` are real-time safe (no allocation, locks, I/O or runtime
/// calls) and may be called on the audio thread; the value has one owner at a time.
public struct ProcessingChain: ~Copyable {
    public private(set) var spec: ProcessingSpec
    /// The current targets (each value clamped into its range).
    public private(set) var settings: ChainSettings

    // MARK: Stage 0 — personalization (reserved)
    // The personalization processor (per-ear, per-band gains and compression from a hearing
    // profile) is a later issue. It will be stored here and run first in `processChunk`, with the
    // same prepare/apply/reset/process triad as the stages below.

    private var filter: BiquadFilter
    private var ringModulator: RingModulator
    private var outputGain: OutputGain
    /// Output channel pointers offset to the current chunk.
    private let chunkPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Prepares every stage for `spec`, starting at `settings` (no ramp from defaults).
    /// Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: ChainSettings = ChainSettings()) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        self.spec = spec
        let settings = settings.clamped()
        self.settings = settings
        filter = BiquadFilter(spec: spec, settings: settings.filter)
        ringModulator = RingModulator(spec: spec, settings: settings.ringModulator)
        outputGain = OutputGain(spec: spec, settings: settings.outputGain)
        chunkPointers = .allocate(capacity: spec.channelCount)
        chunkPointers.initialize(repeating: UnsafeMutablePointer(bitPattern: 0x10)!, count: spec.channelCount)
    }

    deinit {
        chunkPointers.deallocate()
    }

    /// True when `process` currently is a plain copy: every stage bypassed or at unity.
    public var isPassthrough: Bool {
        filter.isBypassed && ringModulator.isBypassed && outputGain.isUnity
    }

    /// Changes the sample rate of every stage: coefficients and ramp lengths are recomputed,
    /// states cleared. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        spec.sampleRate = sampleRate
        filter.setSampleRate(sampleRate)
        ringModulator.setSampleRate(sampleRate)
        outputGain.setSampleRate(sampleRate)
    }

    /// Clears filter states, resets the modulator phase and jumps every smoother to its target.
    /// Real-time safe.
    public mutating func reset() {
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
            processChunk(count: count)
            chunkStart &+= count
        }
    }

    /// Runs the stages in place on `chunkPointers`.
    private mutating func processChunk(count: Int) {
        let buffers = UnsafePointer(chunkPointers)
        // Stage 0: personalization (reserved slot, see above).
        filter.process(buffers, frameCount: count)
        ringModulator.process(buffers, frameCount: count)
        outputGain.process(buffers, frameCount: count)
    }
}

extension ProcessingChain: @unchecked Sendable {}
