import SoundFitDSP

/// The renderer's hearing-test mode: while the test runs, the output is only the tone stimulus
/// and the masking noise (the input is ignored; the tone is on the tested ear's channels, the
/// noise, when set, on the other ear's; every other channel is silent), then the output safety
/// limit, which holds in every mode.
///
/// The masking noise is continuous: it follows its own setting (ramping to each new level) and
/// not the tones, so its onset never tells the listener a tone comes. Outside test mode it is
/// not rendered (the runner sets it off when the test ends).
///
/// Entering and leaving the mode cross-fades between the chain's output and the stimulus over
/// `fadeSeconds`, so neither the listener's sound nor the test starts with a click. Fully in test
/// mode the chain is not run at all; it is reset before it runs again (stale filter states would
/// otherwise replay), and fades in from there.
///
/// Threads: `init` allocates (control thread); `process` and `setSampleRate` are real-time safe
/// and run on the audio thread only.
struct StimulusStage: ~Copyable {
    static let fadeSeconds = 0.01

    private let mailbox: StimulusMailbox
    private var tone: ToneStimulus
    private var noise: NarrowBandNoise
    /// 0 = the chain's output only, 1 = the stimulus only.
    private var mix: Float = 0
    private var fadeStep: Float
    /// The seqlock version of the last command taken.
    private var takenVersion: UInt64 = 0
    /// The seqlock version of the last masking setting taken.
    private var takenMaskingVersion: UInt64 = 0
    /// The chain was skipped (fully in test mode): reset it before its next run.
    private var chainSkipped = false
    private let channelCount: Int
    private let maximumFrameCount: Int
    /// One `maximumFrameCount` scratch channel per output channel for the tone.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Input and output pointers offset to the current chunk.
    private let chunkInputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let chunkOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(spec: ProcessingSpec, mailbox: StimulusMailbox) {
        self.mailbox = mailbox
        tone = ToneStimulus(sampleRate: spec.sampleRate)
        noise = NarrowBandNoise(sampleRate: spec.sampleRate)
        fadeStep = Self.fadeStep(spec.sampleRate)
        channelCount = spec.channelCount
        maximumFrameCount = spec.maximumFrameCount
        scratch = .allocate(capacity: spec.channelCount * spec.maximumFrameCount)
        scratch.initialize(repeating: 0, count: spec.channelCount * spec.maximumFrameCount)
        scratchPointers = .allocate(capacity: spec.channelCount)
        for channel in 0..<spec.channelCount {
            (scratchPointers + channel).initialize(to: scratch + channel * spec.maximumFrameCount)
        }
        chunkInputs = .allocate(capacity: spec.channelCount)
        chunkOutputs = .allocate(capacity: spec.channelCount)
        // Commands published before this renderer existed are not replayed.
        takenVersion = mailbox.version.pointee.load(ordering: .acquiring)
        // The masking setting, unlike a tone, is a state: the current one applies.
        takenMaskingVersion = mailbox.maskingVersion.pointee.load(ordering: .acquiring) & ~1
        if takenMaskingVersion > 0, let setting = mailbox.readMasking(at: takenMaskingVersion) {
            noise.set(setting)
        }
    }

    deinit {
        scratch.deallocate()
        scratchPointers.deallocate()
        chunkInputs.deallocate()
        chunkOutputs.deallocate()
    }

    private static func fadeStep(_ sampleRate: Double) -> Float {
        Float(1 / max(1, fadeSeconds * sampleRate))
    }

    /// Real-time safe. A tone in progress stops; the masking noise is set up again for the new
    /// rate and ramps back in.
    mutating func setSampleRate(_ sampleRate: Double) {
        tone.setSampleRate(sampleRate)
        noise.setSampleRate(sampleRate)
        fadeStep = Self.fadeStep(sampleRate)
    }

    /// True when `process` would change nothing and return false: test mode off and faded out,
    /// no tone or stopped noise to clear, the chain not skipped, no command or masking setting
    /// waiting. The renderer reads it inline, so an ordinary cycle does not call into the stage
    /// (less code and memory touched per cycle). Real-time safe: three atomic loads.
    @inline(__always)
    var isQuiet: Bool {
        mix == 0 && !chainSkipped && !tone.isPlaying && !(noise.target == nil && noise.playing != nil)
            && !mailbox.testMode.pointee.load(ordering: .acquiring)
            && mailbox.version.pointee.load(ordering: .acquiring) == takenVersion
            && mailbox.maskingVersion.pointee.load(ordering: .acquiring) == takenMaskingVersion
    }

    /// Renders the cycle when test mode is on or fading; returns false when it is off (the
    /// renderer runs the chain as usual). Takes the latest tone command first and reports the
    /// onset of a tone it starts as this `cycle`. While it renders, both ears' output limit is
    /// `ceiling` (the hearing test's: tones up to the maximum output, whatever a profile derived
    /// for the ear). Real-time safe.
    mutating func process(chain: inout ProcessingChain, inputs: UnsafePointer<UnsafePointer<Float>>,
                          outputs: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int, cycle: UInt64,
                          ceiling: Float) -> Bool {
        let testMode = mailbox.testMode.pointee.load(ordering: .acquiring)
        takeCommand(cycle: cycle)
        if !testMode && mix == 0 {
            if tone.isPlaying { tone.stop() }
            // Set off while nothing of the stimulus is heard: no ramp to wait for.
            if noise.target == nil && noise.playing != nil { noise.stop() }
            if chainSkipped {
                chain.reset()
                chainSkipped = false
            }
            return false
        }
        let target: Float = testMode ? 1 : 0
        chain.setOutputCeiling(ceiling)
        var start = 0
        while start < frameCount {
            let count = min(frameCount &- start, maximumFrameCount)
            for channel in 0..<channelCount {
                chunkInputs[channel] = inputs[channel] + start
                chunkOutputs[channel] = outputs[channel] + start
            }
            if mix == 1 && target == 1 {
                for channel in 0..<channelCount { chunkOutputs[channel].update(repeating: 0, count: count) }
                chainSkipped = true
            } else {
                if chainSkipped {
                    chain.reset()
                    chainSkipped = false
                }
                chain.process(inputs: chunkInputs, outputs: chunkOutputs, frameCount: count)
            }
            tone.render(scratchPointers, channelCount: channelCount, frameCount: count)
            noise.render(adding: scratchPointers, channelCount: channelCount, frameCount: count)
            if mix == target {
                if mix == 1 {
                    for channel in 0..<channelCount {
                        chunkOutputs[channel].update(from: scratchPointers[channel], count: count)
                    }
                }
            } else {
                crossFade(count: count, toward: target)
            }
            start &+= count
        }
        if mix == 0 && tone.isPlaying { tone.stop() }
        chain.limitOutput(outputs, frameCount: frameCount)
        return true
    }

    /// Moves `mix` toward `target` frame by frame, mixing the chunk's chain output with the tone.
    @inline(__always)
    private mutating func crossFade(count: Int, toward target: Float) {
        for frame in 0..<count {
            mix = target > mix ? min(target, mix + fadeStep) : max(target, mix - fadeStep)
            for channel in 0..<channelCount {
                let chainSample = chunkOutputs[channel][frame]
                chunkOutputs[channel][frame] = chainSample * (1 - mix) + scratchPointers[channel][frame] * mix
            }
        }
    }

    /// Takes the latest tone command if one was published since the last. Real-time safe.
    @inline(__always)
    private mutating func takeCommand(cycle: UInt64) {
        let maskingVersion = mailbox.maskingVersion.pointee.load(ordering: .acquiring)
        if maskingVersion != takenMaskingVersion, maskingVersion & 1 == 0,
           let setting = mailbox.readMasking(at: maskingVersion) {
            takenMaskingVersion = maskingVersion
            noise.set(setting)
        }
        let version = mailbox.version.pointee.load(ordering: .acquiring)
        guard version != takenVersion, version & 1 == 0, let command = mailbox.read(at: version) else { return }
        takenVersion = version
        switch command.action {
        case .play:
            tone.start(command.tone)
            mailbox.startedCycle.pointee.store(cycle, ordering: .relaxed)
            mailbox.startedNumber.pointee.store(command.number, ordering: .releasing)
        case .stop:
            tone.stop()
        }
    }
}
