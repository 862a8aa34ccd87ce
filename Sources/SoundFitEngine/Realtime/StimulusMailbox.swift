import SoundFitDSP
import Synchronization

/// The hearing test's meeting point with the audio thread: whether the renderer is in test mode,
/// the latest tone command, and which tone the audio thread started last.
///
/// - Control → audio: `testMode`, and one tone command published through a seqlock (`version`
///   odd while the control side writes; the audio thread takes a command only from an even,
///   unchanged version, so it never starts half a command). A newer command replaces one the
///   audio thread has not taken yet: only the latest counts.
/// - Control → audio: the masking noise, through a second seqlock of the same form
///   (`maskingVersion`, `masking`): on/off, centre frequency, RMS amplitude, ear. Only the
///   latest setting counts; the audio thread ramps to it.
/// - Audio → control: the number of the last tone started and the cycle it started in (the
///   tone's onset is the first frame of that cycle).
///
/// Plain pointers only: copies never retain. Memory is owned by `EngineMailbox`.
public struct StimulusMailbox: @unchecked Sendable {
    /// What a command asks.
    enum Action: UInt64 {
        case play = 1
        case stop = 2
    }

    let testMode: UnsafeMutablePointer<Atomic<Bool>>
    /// Even when a command is complete; odd while the control side writes one.
    let version: UnsafeMutablePointer<Atomic<UInt64>>
    /// The command's words: action, tone number, frequency, amplitude, seconds (Double bits),
    /// ear (raw value), pulsed (0/1).
    let command: UnsafeMutablePointer<Atomic<UInt64>>
    static let commandWords = 7
    let startedNumber: UnsafeMutablePointer<Atomic<UInt64>>
    let startedCycle: UnsafeMutablePointer<Atomic<UInt64>>
    /// Even when the masking setting is complete; odd while the control side writes it.
    let maskingVersion: UnsafeMutablePointer<Atomic<UInt64>>
    /// The masking setting's words: on (0/1), frequency, amplitude (Double bits), ear (raw value).
    let masking: UnsafeMutablePointer<Atomic<UInt64>>
    static let maskingWords = 4

    static func allocate() -> StimulusMailbox {
        func atomic<T: AtomicRepresentable>(_ value: T, count: Int = 1) -> UnsafeMutablePointer<Atomic<T>> {
            let pointer = UnsafeMutablePointer<Atomic<T>>.allocate(capacity: count)
            for index in 0..<count { (pointer + index).initialize(to: Atomic(value)) }
            return pointer
        }
        return StimulusMailbox(testMode: atomic(false), version: atomic(UInt64(0)),
                               command: atomic(UInt64(0), count: commandWords),
                               startedNumber: atomic(UInt64(0)), startedCycle: atomic(UInt64(0)),
                               maskingVersion: atomic(UInt64(0)), masking: atomic(UInt64(0), count: maskingWords))
    }

    func deallocate() {
        testMode.deallocate()
        version.deallocate()
        command.deallocate()
        startedNumber.deallocate()
        startedCycle.deallocate()
        maskingVersion.deallocate()
        masking.deallocate()
    }

    // MARK: Control side (one writer at a time: `AudioEngine` serializes)

    func publish(_ action: Action, number: UInt64, tone: ToneStimulus.Tone?) {
        version.pointee.add(1, ordering: .acquiringAndReleasing)
        let words: [UInt64] = [
            action.rawValue, number, (tone?.frequency ?? 0).bitPattern, (tone?.amplitude ?? 0).bitPattern,
            (tone?.seconds ?? 0).bitPattern, UInt64(tone?.ear.rawValue ?? 0), tone?.isPulsed == true ? 1 : 0,
        ]
        for (index, word) in words.enumerated() {
            command[index].store(word, ordering: .releasing)
        }
        version.pointee.add(1, ordering: .releasing)
    }

    /// Publishes the masking noise setting (nil: off). One writer at a time.
    func publishMasking(_ noise: MaskingNoise?) {
        maskingVersion.pointee.add(1, ordering: .acquiringAndReleasing)
        masking[0].store(noise == nil ? 0 : 1, ordering: .releasing)
        masking[1].store((noise?.frequency ?? 0).bitPattern, ordering: .releasing)
        masking[2].store((noise?.amplitude ?? 0).bitPattern, ordering: .releasing)
        masking[3].store(UInt64(noise?.ear.rawValue ?? 0), ordering: .releasing)
        maskingVersion.pointee.add(1, ordering: .releasing)
    }

    // MARK: Audio thread

    /// The masking setting published at `expectedVersion`, read consistently: `.some(nil)` for
    /// off, nil when it raced a write (taken next cycle). Real-time safe: wait-free.
    @inline(__always)
    func readMasking(at expectedVersion: UInt64) -> MaskingNoise?? {
        let on = masking[0].load(ordering: .acquiring)
        let frequency = Double(bitPattern: masking[1].load(ordering: .acquiring))
        let amplitude = Double(bitPattern: masking[2].load(ordering: .acquiring))
        let ear = masking[3].load(ordering: .acquiring)
        guard maskingVersion.pointee.load(ordering: .acquiring) == expectedVersion else { return nil }
        guard on != 0 else { return .some(nil) }
        return .some(MaskingNoise(frequency: frequency, ear: ear == UInt64(ToneStimulus.Ear.right.rawValue) ? .right : .left,
                                  amplitude: amplitude))
    }

    /// The command published at `version`, read consistently, or nil when it raced a write
    /// (taken next cycle). Real-time safe: wait-free, no allocation.
    @inline(__always)
    func read(at expectedVersion: UInt64) -> (action: Action, number: UInt64, tone: ToneStimulus.Tone)? {
        let action = command[0].load(ordering: .acquiring)
        let number = command[1].load(ordering: .acquiring)
        let frequency = Double(bitPattern: command[2].load(ordering: .acquiring))
        let amplitude = Double(bitPattern: command[3].load(ordering: .acquiring))
        let seconds = Double(bitPattern: command[4].load(ordering: .acquiring))
        let ear = command[5].load(ordering: .acquiring)
        let pulsed = command[6].load(ordering: .acquiring)
        guard version.pointee.load(ordering: .acquiring) == expectedVersion,
              let action = Action(rawValue: action) else { return nil }
        let tone = ToneStimulus.Tone(frequency: frequency, amplitude: amplitude,
                                     ear: ear == UInt64(ToneStimulus.Ear.right.rawValue) ? .right : .left,
                                     seconds: seconds, isPulsed: pulsed != 0)
        return (action, number, tone)
    }
}
