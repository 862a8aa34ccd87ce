import CJack
import Foundation
import Glibc
import SoundFit
import SoundFitTestSupport
import Synchronization

/// What the virtual listener's process callback touches: plain pointers, allocated before
/// activation and freed after `jack_client_close`.
struct VirtualListenerRealtimeState {
    let channelCount: Int
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    /// Channel-major ring of the last `ringFrames` frames per channel.
    let ring: UnsafeMutablePointer<Float>
    let ringFrames: Int
    /// Frames written so far (the ring's write position is this modulo `ringFrames`).
    let written: UnsafeMutablePointer<Atomic<Int>>
}

/// Copies every input port into the ring. Real-time thread: pointer arithmetic and one atomic.
func virtualListenerProcessCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let state = arg.assumingMemoryBound(to: VirtualListenerRealtimeState.self).pointee
    let count = Int(frames)
    let start = state.written.pointee.load(ordering: .relaxed)
    for channel in 0..<state.channelCount {
        guard let raw = jack_port_get_buffer(state.inputPorts[channel], frames) else { continue }
        let input = raw.assumingMemoryBound(to: Float.self)
        let ring = state.ring + channel * state.ringFrames
        for frame in 0..<count { ring[(start + frame) % state.ringFrames] = input[frame] }
    }
    state.written.pointee.store(start + count, ordering: .releasing)
    return 0
}

/// A listener with headphones on SoundFit's outputs, for hearing tests through JACK: a JACK
/// client that captures SoundFit's outputs, finds each tone, measures its level per ear and
/// converts it to dB HL with the same calibration and earphone table SoundFit uses, then answers
/// `/test/heard` over UDP after a human-like delay with the probability of `SimulatedListener`'s
/// psychometric function. A listener with false alarms (γ > 0) also presses at random moments of
/// silence, γ per `responseWindowSeconds` on average: a silent catch trial is answered with
/// probability ≈ γ, as `SimulatedListener` answers one.
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
        /// When its first sample reached the listener's input (wall clock, within a JACK period).
        var onset = Date.distantPast
    }

    let listener: SimulatedListener
    let calibration: ToneCalibration
    let sampleRate: Double
    private var client: OpaquePointer?
    private let state: UnsafeMutablePointer<VirtualListenerRealtimeState>
    private let osc: OSCTestClient
    private let responseWindowSeconds: Double
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let measured = Mutex<[Presentation]>([])
    private let spontaneousPresses = Atomic<Int>(0)

    /// Opens `name` on `server`, connects SoundFit's `output_i` ports (`soundfitClient`) to its
    /// inputs and starts listening; answers go to SoundFit's OSC port `oscPort`.
    init(server: String, soundfitClient: String, oscPort: UInt16, channels: Int = 2, listener: SimulatedListener,
         calibration: ToneCalibration = ToneCalibration(fullScaleSPL: PresetGenerator.defaultCalibration),
         responseWindowSeconds: Double, name: String = "sflistener", seed: UInt64) throws {
        self.listener = listener
        self.calibration = calibration
        self.responseWindowSeconds = responseWindowSeconds
        osc = try OSCTestClient(port: oscPort)
        let client = try openTestJackClient(name, on: server, role: "virtual listener")
        self.client = client
        sampleRate = Double(jack_get_sample_rate(client))
        let ringFrames = Int(sampleRate) * 4
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: channels * ringFrames)
        ring.initialize(repeating: 0, count: channels * ringFrames)
        let inputs = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: channels)
        inputs.initialize(repeating: nil, count: channels)
        let written = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
        written.initialize(to: Atomic(0))
        state = .allocate(capacity: 1)
        state.initialize(to: VirtualListenerRealtimeState(channelCount: channels, inputPorts: inputs, ring: ring,
                                                          ringFrames: ringFrames, written: written))
        for channel in 0..<channels {
            guard let port = jack_port_register(client, "in_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE,
                                                UInt(JackPortIsInput.rawValue), 0) else {
                close()
                throw IntegrationError("virtual listener cannot register ports")
            }
            inputs[channel] = port
        }
        guard jack_set_process_callback(client, virtualListenerProcessCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0 else {
            close()
            throw IntegrationError("virtual listener cannot activate")
        }
        let myName = String(cString: jack_get_client_name(client))
        for channel in 1...channels {
            let result = jack_connect(client, "\(soundfitClient):output_\(channel)", "\(myName):in_\(channel)")
            guard result == 0 || result == EEXIST else {
                close()
                throw IntegrationError("virtual listener cannot connect \(soundfitClient):output_\(channel) (error \(result))")
            }
        }
        let thread = Thread { [self] in listen(seed: seed) }
        thread.name = "virtual listener"
        thread.start()
    }

    deinit {
        stop()
        state.pointee.ring.deallocate()
        state.pointee.inputPorts.deallocate()
        state.pointee.written.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Stops answering, then closes the JACK client. Idempotent.
    func stop() {
        if !stopping.exchange(true, ordering: .acquiringAndReleasing) { finished.wait() }
        close()
    }

    private func close() {
        guard let client else { return }
        jack_deactivate(client)
        jack_client_close(client)
        self.client = nil
    }

    /// Every tone measured so far.
    var presentations: [Presentation] { measured.withLock { $0 } }
    /// Presses made in silence (false alarms).
    var falseAlarms: Int { spontaneousPresses.load(ordering: .relaxed) }

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
        let ringFrames = state.pointee.ringFrames, channels = state.pointee.channelCount
        var position = state.pointee.written.pointee.load(ordering: .acquiring)
        var onset: Int?   // frame of the current tone's first non-zero sample
        var decided = false
        var silentFrames = 0
        var lastSpontaneousCheck = ContinuousClock.now
        let measureStart = Int(Self.measureStart * sampleRate), measureEnd = measureStart + Int(Self.measureLength * sampleRate)
        while !stopping.load(ordering: .acquiring) {
            // The clock first: a thread preempted between the two then stamps onsets early,
            // never late.
            let loaded = Date()
            let written = state.pointee.written.pointee.load(ordering: .acquiring)
            while position < written {
                var loudest = 0
                var peak: Float = 0
                for channel in 0..<channels {
                    let sample = abs(state.pointee.ring[channel * ringFrames + position % ringFrames])
                    if sample > peak {
                        peak = sample
                        loudest = channel
                    }
                }
                if peak > 0 {
                    silentFrames = 0
                    if onset == nil {
                        onset = position
                        decided = false
                    }
                } else if onset != nil {
                    silentFrames += 1
                    if silentFrames >= Int(Self.silenceToEnd * sampleRate) { onset = nil }
                }
                _ = loudest
                if let start = onset, !decided, position - start + 1 >= measureEnd {
                    decided = true
                    decide(toneAt: start, measuring: (start + measureStart)..<(start + measureEnd), written: written,
                           loaded: loaded, random: &random)
                }
                position += 1
            }
            // False alarms: presses in silence, γ per response window on average.
            let now = ContinuousClock.now
            let elapsed = Double((now - lastSpontaneousCheck).components.attoseconds) * 1e-18
                + Double((now - lastSpontaneousCheck).components.seconds)
            lastSpontaneousCheck = now
            if onset == nil, listener.falseAlarms > 0, listener.answers,
               Double.random(in: 0..<1, using: &random) < listener.falseAlarms * elapsed / responseWindowSeconds {
                osc.send("/test/heard")
                spontaneousPresses.add(1, ordering: .relaxed)
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    /// Measures the tone starting at frame `start` over `range` and answers.
    /// `loaded`: when `written` was read (the onset is that long before it, in frames).
    private func decide(toneAt start: Int, measuring range: Range<Int>, written: Int, loaded: Date,
                        random: inout SeededRandom) {
        let ringFrames = state.pointee.ringFrames
        var best: (channel: Int, power: Double) = (0, 0)
        for channel in 0..<state.pointee.channelCount {
            var sum = 0.0
            for frame in range {
                let sample = Double(state.pointee.ring[channel * ringFrames + frame % ringFrames])
                sum += sample * sample
            }
            if sum > best.power { best = (channel, sum) }
        }
        let ring = state.pointee.ring + best.channel * ringFrames
        var crossings = 0
        for frame in range.dropFirst() where ring[(frame - 1) % ringFrames] < 0 && ring[frame % ringFrames] >= 0 {
            crossings += 1
        }
        let measuredFrequency = Double(crossings) * sampleRate / Double(range.count)
        let frequency = Audiogram.standardFrequencies.min { abs(log2($0 / measuredFrequency)) < abs(log2($1 / measuredFrequency)) }!
        let amplitude = (2 * best.power / Double(range.count)).squareRoot()
        let dbfs = 20 * log10(max(amplitude, 1e-12))
        let level = dbfs + calibration.fullScaleSPL - calibration.earphone.retspl(at: frequency)
        let ear: Ear = best.channel % 2 == 0 ? .left : .right
        let probability = listener.probabilityOfHeard(ear, frequency: frequency, level: level)
        let pressed = Double.random(in: 0..<1, using: &random) < probability
        let onset = loaded.addingTimeInterval(-Double(written - start) / sampleRate)
        measured.withLock { $0.append(Presentation(ear: ear, frequency: frequency, level: level, pressed: pressed, onset: onset)) }
        guard pressed else { return }
        // A human-like reaction: 150…250 ms after the onset (the analysis is already ~100 ms in).
        let sinceOnset = Double(written - start) / sampleRate
        let delay = Double.random(in: 0.15...0.25, using: &random) - sinceOnset
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        osc.send("/test/heard")
    }
}
