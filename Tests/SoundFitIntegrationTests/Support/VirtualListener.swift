import Foundation
import Glibc
import SoundFit
import SoundFitTestSupport
import Synchronization

/// A listener with headphones on SoundFit's outputs, for hearing tests through JACK: a JACK
/// client that captures SoundFit's outputs, finds each tone, measures its level per ear and
/// converts it to dB HL with the same calibration and earphone table SoundFit uses, then answers
/// `/test/heard` over UDP after a human-like delay with the probability of `SimulatedListener`'s
/// psychometric function.
///
/// Cross-hearing: the listener tells tones (a sine explains ≥ 80 % of the power) from masking
/// noise (anything else) in each ear (channel 1 left, channel 2 right), measures the noise's
/// RMS over each tone's measuring window and converts it to dB EM through the same calibration
/// (`ToneCalibration.effectiveMasking`). Each cochlea receives its own ear's tone and the
/// other ear's tone − `interauralAttenuation`; noise of E dB EM in an ear raises that cochlea's
/// threshold to max(threshold, E) and the other cochlea's to max(threshold, E − IA). The tone
/// is heard with the larger of the two cochleas' probabilities. A listener with false alarms
/// (γ > 0) also presses at random moments of silence, γ per `responseWindowSeconds` of heard
/// silence on average (a Poisson process counted in heard frames): a silent catch trial is
/// answered with probability ≈ γ, as `SimulatedListener` answers one.
///
/// Threads: JACK's process thread fills the ring; one analysis thread of its own finds tones
/// and answers. `stop()` ends both.
final class VirtualListener: @unchecked Sendable {
    /// One tone the listener measured.
    struct Presentation: Sendable {
        var ear: Ear
        var frequency: Double
        var level: Double
        var pressed: Bool
        /// dB EM of the masking noise measured in the other ear during the tone (nil: none).
        var maskingLevel: Double? = nil
        /// When its first sample reached the listener's input (wall clock, within a JACK period).
        var onset = Date.distantPast
    }

    let listener: SimulatedListener
    let calibration: ToneCalibration
    /// The reference levels SoundFit's masking noise is calibrated with.
    let maskingReference: MaskingNoiseReference
    /// dB lost by a sound crossing from one ear's earphone to the other cochlea.
    let interauralAttenuation: Double
    let sampleRate: Double
    /// The test JACK client in the listener role, its inputs on SoundFit's outputs.
    private let jackClient: TestJackClient
    private let osc: OSCTestClient
    private let responseWindowSeconds: Double
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let measured = Mutex<[Presentation]>([])
    private let spontaneousPresses = Atomic<Int>(0)
    private let rejected = Mutex<[String]>([])
    /// The frames of SoundFit's output the listener analysed (`jackClient.framesHeard` counts).
    private let analysedFrames = Atomic<Int>(0)

    /// Opens `name` on `server`, connects SoundFit's `output_i` ports (`soundfitClient`) to its
    /// inputs and starts listening; answers go to SoundFit's OSC port `oscPort`.
    init(server: String, soundfitClient: String, oscPort: UInt16, channels: Int = 2, listener: SimulatedListener,
         calibration: ToneCalibration = ToneCalibration(fullScaleSPL: PresetGenerator.defaultCalibration),
         responseWindowSeconds: Double, name: String = "sflistener", seed: UInt64,
         interauralAttenuation: Double = 40, maskingReference: MaskingNoiseReference = .uncorrected) throws {
        // This listener models cross-hearing from what it measures in both ears; the simulated
        // listener's own cross-hearing model (for simulations without audio) would count it twice.
        var oneEarAtATime = listener
        oneEarAtATime.interauralAttenuation = nil
        self.listener = oneEarAtATime
        self.calibration = calibration
        self.interauralAttenuation = interauralAttenuation
        self.maskingReference = maskingReference
        self.responseWindowSeconds = responseWindowSeconds
        osc = try OSCTestClient(port: oscPort)
        let jackClient = try TestJackClient(server: server, name: name, channels: channels, roles: .listener)
        try jackClient.listen(to: soundfitClient)
        self.jackClient = jackClient
        sampleRate = jackClient.sampleRate
        let thread = Thread { [self] in listen(seed: seed) }
        thread.name = "virtual listener"
        thread.start()
    }

    deinit { stop() }

    /// Stops answering, then closes the JACK client. Idempotent.
    func stop() {
        if !stopping.exchange(true, ordering: .acquiringAndReleasing) { finished.wait() }
        jackClient.close()
    }

    /// Every tone measured so far.
    var presentations: [Presentation] { measured.withLock { $0 } }
    /// Sounds analysed and found not to be tones, for a failing test's message (masking noise
    /// is expected here).
    var rejectedSounds: [String] { rejected.withLock { $0 } }
    /// Presses made in silence (false alarms).
    var falseAlarms: Int { spontaneousPresses.load(ordering: .relaxed) }

    /// Waits until the listener analysed `seconds` more of SoundFit's output than JACK had
    /// delivered when called: a span of audio time counted in the frames JACK's cycles brought
    /// (a stalled server does not fake it) and the listener measured (a tone in them is counted).
    func waitForAnalysedAudio(seconds: Double, timeout: Duration = .seconds(30)) throws {
        let target = jackClient.framesHeard + Int((seconds * sampleRate).rounded(.up))
        let deadline = ContinuousClock.now + timeout
        while analysedFrames.load(ordering: .acquiring) < target {
            if ContinuousClock.now >= deadline { throw IntegrationError("the listener analysed no \(seconds) s of audio within \(timeout)") }
            Thread.sleep(forTimeInterval: 0.002)  // polls a condition (with a deadline)
        }
    }

    // MARK: Analysis thread

    /// How a tone is measured: from `measureStart` after its first non-zero sample (after the
    /// 25 ms onset ramp) for `measureLength` — then the listener decides.
    private static let measureStart = 0.03
    private static let measureLength = 0.07
    /// A tone has ended after this much exact silence.
    private static let silenceToEnd = 0.01

    private func listen(seed: UInt64) {
        defer { finished.signal() }
        var random = SeededRandom(seed: seed)
        let ears = min(2, jackClient.channelCount)
        var position = jackClient.framesHeard
        // Per ear: the frame of the current sound's first non-zero sample, whether it was
        // analysed, whether it is a tone, and the exact silence since its last sample.
        var onset = [Int?](repeating: nil, count: ears)
        var decided = [Bool](repeating: false, count: ears)
        var isTone = [Bool](repeating: false, count: ears)
        var silentFrames = [Int](repeating: 0, count: ears)
        // False alarms are a Poisson process on the heard audio (γ per response window) with a
        // generator of their own: how the analysis passes fall in time changes neither when
        // the listener presses in silence nor the draws that decide the tones.
        var spontaneousRandom = SeededRandom(seed: seed ^ 0x5EED_FA15_E0A1_A2A5)
        let pressesPerFrame = listener.falseAlarms / (responseWindowSeconds * sampleRate)
        func framesToNextPress() -> Int {
            max(1, Int((-log(1 - Double.random(in: 0..<1, using: &spontaneousRandom)) / pressesPerFrame).rounded(.up)))
        }
        var nextSpontaneousPress = pressesPerFrame > 0 ? position + framesToNextPress() : Int.max
        let measureStart = Int(Self.measureStart * sampleRate), measureEnd = measureStart + Int(Self.measureLength * sampleRate)
        while !stopping.load(ordering: .acquiring) {
            // The clock first: a thread preempted between the two then stamps onsets early,
            // never late.
            let loaded = Date()
            let written = jackClient.framesHeard
            while position < written {
                for ear in 0..<ears {
                    if sample(ear, position) != 0 {
                        silentFrames[ear] = 0
                        if onset[ear] == nil {
                            onset[ear] = position
                            decided[ear] = false
                            isTone[ear] = false
                        }
                    } else if onset[ear] != nil {
                        silentFrames[ear] += 1
                        if silentFrames[ear] >= Int(Self.silenceToEnd * sampleRate) { onset[ear] = nil }
                    }
                    if let start = onset[ear], !decided[ear], position - start + 1 >= measureEnd {
                        decided[ear] = true
                        let range = (start + measureStart)..<(start + measureEnd)
                        if let frequency = toneFrequency(ear, range) {
                            isTone[ear] = true
                            decide(toneAt: start, ear: ear, frequency: frequency, measuring: range, written: written, loaded: loaded,
                                   random: &random)
                        }
                    }
                }
                position += 1
            }
            analysedFrames.store(position, ordering: .releasing)
            // False alarms: a press due by now is made if no tone sounds (one due while a tone
            // sounds is dropped, so presses in silence keep γ per response window of silence).
            while position >= nextSpontaneousPress {
                let quiet = (0..<ears).allSatisfy { onset[$0] == nil || decided[$0] && !isTone[$0] }
                if quiet, listener.answers {
                    osc.send("/test/heard")
                    spontaneousPresses.add(1, ordering: .relaxed)
                }
                nextSpontaneousPress += framesToNextPress()
            }
            // The next pass: once more audio was heard, or after 50 ms without (the stop flag is
            // looked at either way).
            _ = jackClient.waitUntilHeard(position + 1, timeout: .milliseconds(50))
        }
    }

    /// Sample `frame` of `channel` from the ring.
    private func sample(_ channel: Int, _ frame: Int) -> Float {
        jackClient.heardSample(channel, frame)
    }

    /// The standard frequency of the tone in `channel` over `range`, or nil when what plays
    /// there is not a tone (noise, silence): in at least three of the range's four quarters, a
    /// sine at the zero-crossing frequency (its own phase per quarter) explains ≥ 80 % of the
    /// power. A one-third-octave noise explains about 25 % of a quarter. Quarters, not the whole
    /// range, because a late JACK cycle (a non-realtime server at 64 frames on a loaded machine)
    /// drops or repeats a period: the tone's phase jumps there, and one fit over 70 ms then
    /// explains as little as 25 % of a perfect tone. An ear hears through such a click.
    private func toneFrequency(_ channel: Int, _ range: Range<Int>) -> Double? {
        var crossings = 0
        var power = 0.0
        for frame in range {
            let x = Double(sample(channel, frame))
            power += x * x
            if frame > range.lowerBound && sample(channel, frame - 1) < 0 && x >= 0 { crossings += 1 }
        }
        guard power > 0, crossings > 0 else { return nil }
        let measured = Double(crossings) * sampleRate / Double(range.count)
        let frequency = Audiogram.standardFrequencies.min { abs(log2($0 / measured)) < abs(log2($1 / measured)) }!
        let quarter = range.count / 4
        let tonal = (0..<4).filter { index in
            let start = range.lowerBound + index * quarter
            return explainedShare(channel, start..<(start + quarter), frequency: frequency) >= 0.8
        }
        guard tonal.count >= 3 else {
            rejected.withLock { $0.append("\(frequency) Hz in channel \(channel + 1): tonal quarters \(tonal)") }
            return nil
        }
        return frequency
    }

    /// The share of the power in `channel` over `range` that a least-squares fit of
    /// a·sin + b·cos at `frequency` explains (0 for silence).
    private func explainedShare(_ channel: Int, _ range: Range<Int>, frequency: Double) -> Double {
        var s = 0.0, c = 0.0, ss = 0.0, cc = 0.0, sc = 0.0, power = 0.0
        for frame in range {
            let phase = 2 * Double.pi * frequency * Double(frame - range.lowerBound) / sampleRate
            let x = Double(sample(channel, frame)), sine = sin(phase), cosine = cos(phase)
            power += x * x
            s += x * sine; c += x * cosine
            ss += sine * sine; cc += cosine * cosine; sc += sine * cosine
        }
        let determinant = ss * cc - sc * sc
        guard determinant > 0, power > 0 else { return 0 }
        let a = (s * cc - c * sc) / determinant, b = (c * ss - s * sc) / determinant
        return (a * s + b * c) / power
    }

    /// How much noise the masking level is measured over, ending with the tone's measuring
    /// window: a third-octave band's RMS over 70 ms alone scatters by about ±1 dB; over 0.75 s
    /// by about ±0.3 dB at 1 kHz. SoundFit's noise is continuous around its tones.
    private static let maskingMeasureSeconds = 0.75

    /// The effective masking (dB EM at `frequency`) of the noise in `channel` during the tone
    /// measured over `range` (and `maskingMeasureSeconds` before its end), nil when it is
    /// silent or holds a tone.
    private func maskingLevel(_ channel: Int, _ range: Range<Int>, frequency: Double) -> Double? {
        guard channel < jackClient.channelCount, toneFrequency(channel, range) == nil else { return nil }
        var power = 0.0
        for frame in range { power += Double(sample(channel, frame)) * Double(sample(channel, frame)) }
        guard power > 0 else { return nil }
        let long = max(0, range.upperBound - Int(Self.maskingMeasureSeconds * sampleRate))..<range.upperBound
        power = 0
        for frame in long { power += Double(sample(channel, frame)) * Double(sample(channel, frame)) }
        let rms = (power / Double(long.count)).squareRoot()
        return calibration.effectiveMasking(amplitude: rms, frequency: frequency, reference: maskingReference)
    }

    /// The probability that the listener hears a tone of `level` dB HL in `ear`'s earphone at
    /// `frequency` with `masking` dB EM of noise in each earphone (nil: none), cross-hearing
    /// included.
    func probabilityOfHeard(_ ear: Ear, frequency: Double, level: Double, masking: [Ear: Double] = [:]) -> Double {
        let other: Ear = ear == .left ? .right : .left
        let ia = interauralAttenuation
        /// A cochlea's threshold shift: its own ear's noise, and the other's crossing over.
        func shift(_ cochlea: Ear) -> Double {
            let own = listener.threshold(cochlea, at: frequency)
            let opposite: Ear = cochlea == .left ? .right : .left
            let raised = max(own, masking[cochlea] ?? -.infinity, (masking[opposite] ?? -.infinity) - ia)
            return raised - own
        }
        let direct = listener.probabilityOfHeard(ear, frequency: frequency, level: level - shift(ear))
        let crossed = listener.probabilityOfHeard(other, frequency: frequency, level: level - ia - shift(other))
        return max(direct, crossed)
    }

    /// Measures the tone in `channel` starting at frame `start` over `range` and answers.
    /// `loaded`: when `written` was read (the onset is that long before it, in frames).
    private func decide(toneAt start: Int, ear channel: Int, frequency: Double, measuring range: Range<Int>, written: Int,
                        loaded: Date, random: inout SeededRandom) {
        var power = 0.0
        for frame in range { power += Double(sample(channel, frame)) * Double(sample(channel, frame)) }
        let amplitude = (2 * power / Double(range.count)).squareRoot()
        let dbfs = 20 * log10(max(amplitude, 1e-12))
        let level = dbfs + calibration.fullScaleSPL - calibration.earphone.retspl(at: frequency)
        let ear: Ear = channel % 2 == 0 ? .left : .right
        let otherChannel = channel % 2 == 0 ? channel + 1 : channel - 1
        let masking = maskingLevel(otherChannel, range, frequency: frequency)
        var levels: [Ear: Double] = [:]
        levels[ear == .left ? .right : .left] = masking
        let probability = probabilityOfHeard(ear, frequency: frequency, level: level, masking: levels)
        let pressed = Double.random(in: 0..<1, using: &random) < probability
        let onset = loaded.addingTimeInterval(-Double(written - start) / sampleRate)
        measured.withLock {
            $0.append(Presentation(ear: ear, frequency: frequency, level: level, pressed: pressed, maskingLevel: masking,
                                   onset: onset))
        }
        guard pressed else { return }
        // A human-like reaction: 150…250 ms of heard audio after the onset (the analysis is
        // already ~100 ms in), counted in the frames the listener hears.
        let reaction = Int(Double.random(in: 0.15...0.25, using: &random) * sampleRate)
        _ = jackClient.waitUntilHeard(start + reaction, timeout: .seconds(5))
        osc.send("/test/heard")
    }
}
