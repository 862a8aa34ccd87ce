import SoundFitDSP
import Synchronization

/// The hearing test's control of the audio thread: test mode, tones and the masking noise.
///
/// Thread rules: any thread except the audio thread.
extension AudioEngine {
    /// Whether the renderer plays only the test stimulus (entering and leaving fade over
    /// `StimulusStage.fadeSeconds`). Takes effect in the next cycle.
    public var isInTestMode: Bool {
        get { mailbox.realtime.stimulus.testMode.pointee.load(ordering: .acquiring) }
        set { mailbox.realtime.stimulus.testMode.pointee.store(newValue, ordering: .releasing) }
    }

    /// Asks the audio thread to start `tone` at the next cycle (replacing a tone still playing)
    /// and returns its number, to ask `hasStarted(tone:)`. The tone plays only in test mode.
    public func play(_ tone: ToneStimulus.Tone) -> UInt64 {
        toneCommands.withLock { number in
            number += 1
            mailbox.realtime.stimulus.publish(.play, number: number, tone: tone)
            return number
        }
    }

    /// Stops the tone playing, if any, at the next cycle (a pause or a cancel).
    public func stopTone() {
        toneCommands.withLock { number in
            mailbox.realtime.stimulus.publish(.stop, number: number, tone: nil)
        }
    }

    /// Whether the audio thread started tone `number` (or a later one): its onset has passed.
    public func hasStarted(tone number: UInt64) -> Bool {
        mailbox.realtime.stimulus.startedNumber.pointee.load(ordering: .acquiring) >= number
    }

    /// Sets the masking noise (nil: off): narrow-band noise around `masking.frequency` on
    /// `masking.ear`'s channels at RMS `masking.amplitude`, from the next cycle, ramping from
    /// the level playing (`NarrowBandNoise.rampSeconds`). It stays on, independent of tones,
    /// until set otherwise, and plays only in test mode. A mono output plays no noise.
    public func setMasking(_ masking: MaskingNoise?) {
        toneCommands.withLock { _ in
            mailbox.realtime.stimulus.publishMasking(masking)
        }
    }

    /// The masking noise last set (nil: off), as `setMasking` published it.
    public var masking: MaskingNoise? {
        toneCommands.withLock { _ in
            let words = mailbox.realtime.stimulus.masking
            guard words[0].load(ordering: .acquiring) != 0 else { return nil }
            return MaskingNoise(frequency: Double(bitPattern: words[1].load(ordering: .acquiring)),
                                ear: words[3].load(ordering: .acquiring) == UInt64(ToneStimulus.Ear.right.rawValue) ? .right : .left,
                                amplitude: Double(bitPattern: words[2].load(ordering: .acquiring)))
        }
    }
}
