import SoundFitDSP
import Synchronization

/// The hearing test's control of the audio thread: test mode and tones.
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
}
