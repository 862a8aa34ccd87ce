import CJack
import Foundation
import Glibc
import SoundFitTestSupport
import Synchronization

/// Everything the test client's process callback touches: plain pointers and integers,
/// allocated before activation and freed after `jack_client_close`. Nothing here retains.
struct TestClientRealtimeState {
    let channelCount: Int
    let outputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    /// Channel-major signal to play, `playCapacity` frames per channel, looped.
    let play: UnsafeMutablePointer<Float>
    let playCapacity: Int
    /// Channel-major capture, `recordCapacity` frames per channel.
    let record: UnsafeMutablePointer<Float>
    let recordCapacity: Int
    /// [0] requested job (0 = silence), [1] last job whose recording is complete,
    /// [2] cycles run, [3] xruns the server reported. The job parameters below are written while no job runs and published
    /// by the release-store of a new job number.
    let sync: UnsafeMutablePointer<Atomic<Int>>
    var jobPlayLength = 1
    var jobRecordLength = 0
    // Owned by the audio thread.
    var currentJob = 0
    var playPosition = 0
    var recordPosition = 0
}

/// The test client's process callback: plays the preloaded signal on every output port and
/// records every input port into the preallocated capture. Real-time thread: pointer
/// arithmetic and atomics only, no allocation, no locks, no retain/release.
func testClientProcessCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let state = arg.assumingMemoryBound(to: TestClientRealtimeState.self)
    let count = Int(frames)
    let job = state.pointee.sync[0].load(ordering: .acquiring)
    if job != state.pointee.currentJob {
        state.pointee.currentJob = job
        state.pointee.playPosition = 0
        state.pointee.recordPosition = 0
    }
    let playLength = state.pointee.jobPlayLength
    let recordLength = state.pointee.jobRecordLength
    let playPosition = state.pointee.playPosition
    let recordPosition = state.pointee.recordPosition
    let toRecord = job == 0 ? 0 : min(count, recordLength - recordPosition)
    for channel in 0..<state.pointee.channelCount {
        guard let outRaw = jack_port_get_buffer(state.pointee.outputPorts[channel], frames),
              let inRaw = jack_port_get_buffer(state.pointee.inputPorts[channel], frames)
        else { continue }
        let output = outRaw.assumingMemoryBound(to: Float.self)
        let input = inRaw.assumingMemoryBound(to: Float.self)
        if job == 0 {
            output.update(repeating: 0, count: count)
            continue
        }
        let source = state.pointee.play + channel * state.pointee.playCapacity
        var position = playPosition
        for frame in 0..<count {
            output[frame] = source[position]
            position += 1
            if position == playLength { position = 0 }
        }
        if toRecord > 0 {
            let destination = state.pointee.record + channel * state.pointee.recordCapacity + recordPosition
            destination.update(from: input, count: toRecord)
        }
    }
    if job != 0 {
        state.pointee.playPosition = (playPosition + count) % playLength
        if toRecord > 0 {
            state.pointee.recordPosition = recordPosition + toRecord
            if recordPosition + toRecord == recordLength {
                state.pointee.sync[1].store(job, ordering: .releasing)
            }
        }
    }
    state.pointee.sync[2].add(1, ordering: .releasing)
    return 0
}

/// The server reports an xrun (a client missed its deadline: a glitch in the signals).
/// Notification thread.
func testClientXrunCallback(_ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    arg.assumingMemoryBound(to: TestClientRealtimeState.self).pointee.sync[3].add(1, ordering: .releasing)
    return 0
}

/// A JACK client written for the tests: N output ports `out_i` (the player) and N input ports
/// `in_i` (the recorder). `capture` plays a signal through whatever is connected and returns
/// what came back.
final class TestJackClient: @unchecked Sendable {
    let name: String
    let channelCount: Int
    let sampleRate: Double
    private var client: OpaquePointer?
    private let state: UnsafeMutablePointer<TestClientRealtimeState>
    private var nextJob = 0

    init(server: String, name: String = "sftest", channels: Int,
         playCapacity: Int = 48000, recordCapacity: Int = 96000) throws {
        let client = try openTestJackClient(name, on: server, role: "test client")
        self.client = client
        self.name = String(cString: jack_get_client_name(client))
        channelCount = channels
        sampleRate = Double(jack_get_sample_rate(client))

        let sync = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 4)
        for index in 0..<4 { (sync + index).initialize(to: Atomic(0)) }
        let play = UnsafeMutablePointer<Float>.allocate(capacity: channels * playCapacity)
        play.initialize(repeating: 0, count: channels * playCapacity)
        let record = UnsafeMutablePointer<Float>.allocate(capacity: channels * recordCapacity)
        record.initialize(repeating: 0, count: channels * recordCapacity)
        let outputs = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: channels)
        outputs.initialize(repeating: nil, count: channels)
        let inputs = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: channels)
        inputs.initialize(repeating: nil, count: channels)
        state = .allocate(capacity: 1)
        state.initialize(to: TestClientRealtimeState(
            channelCount: channels, outputPorts: outputs, inputPorts: inputs, play: play,
            playCapacity: playCapacity, record: record, recordCapacity: recordCapacity, sync: sync))

        for channel in 0..<channels {
            guard let output = jack_port_register(client, "out_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0),
                  let input = jack_port_register(client, "in_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0)
            else {
                close()
                throw IntegrationError("test client cannot register ports")
            }
            outputs[channel] = output
            inputs[channel] = input
        }
        guard jack_set_process_callback(client, testClientProcessCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_set_xrun_callback(client, testClientXrunCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0
        else {
            close()
            throw IntegrationError("test client cannot activate")
        }
    }

    /// Deactivates and closes the client, then frees what the callback used. Idempotent.
    func close() {
        guard let client else { return }
        jack_deactivate(client)
        jack_client_close(client)
        self.client = nil
    }

    deinit {
        close()
        let s = state.pointee
        s.sync.deinitialize(count: 4)
        s.sync.deallocate()
        s.play.deallocate()
        s.record.deallocate()
        s.outputPorts.deallocate()
        s.inputPorts.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    // MARK: Graph

    /// Connects `out_i` → `<target>:input_i` and `<target>:output_i` → `in_i` for every channel.
    func connect(toClient target: String) throws {
        for channel in 1...channelCount {
            try connect("\(name):out_\(channel)", "\(target):input_\(channel)")
            try connect("\(target):output_\(channel)", "\(name):in_\(channel)")
        }
    }

    func connect(_ source: String, _ destination: String) throws {
        guard let client else { throw IntegrationError("test client closed") }
        let result = jack_connect(client, source, destination)
        guard result == 0 || result == EEXIST else {
            throw IntegrationError("cannot connect \(source) -> \(destination) (error \(result))")
        }
    }

    func disconnect(_ source: String, _ destination: String) throws {
        guard let client else { throw IntegrationError("test client closed") }
        let result = jack_disconnect(client, source, destination)
        guard result == 0 else { throw IntegrationError("cannot disconnect \(source) -> \(destination) (error \(result))") }
    }

    /// Full names of the ports whose names match the regular expression `pattern`.
    func ports(matching pattern: String, flags: UInt32 = 0) -> [String] {
        guard let client, let list = jack_get_ports(client, pattern, nil, UInt(flags)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// Whether `port` is an audio input or output port of the graph, per its flags.
    func portFlags(_ port: String) -> Int32? {
        guard let client, let handle = jack_port_by_name(client, port) else { return nil }
        return jack_port_flags(handle)
    }

    /// Full names of the ports `port` is connected to.
    func connections(of port: String) -> [String] {
        guard let client, let handle = jack_port_by_name(client, port),
              let list = jack_port_get_all_connections(client, handle) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// Cycles the callback has run.
    var cycles: Int { state.pointee.sync[2].load(ordering: .acquiring) }

    // MARK: Play and record

    /// Stops the current job (outputs silence) and waits until the callback no longer touches
    /// the play and record buffers.
    /// Waits until this client ran the cycles of `seconds` of audio (whole periods, at least
    /// one): a span of audio time counted on JACK's cycles, the event a stalled server does not
    /// fake (a wall-clock sleep would count time no cycle ran in).
    func waitForAudio(seconds: Double) throws {
        guard let client else { throw IntegrationError("test client: closed") }
        let count = max(1, Int((seconds * sampleRate / Double(jack_get_buffer_size(client))).rounded(.up)))
        let start = cycles
        let deadline = ContinuousClock.now + .seconds(10 + seconds)
        while cycles < start + count {
            if ContinuousClock.now >= deadline { throw IntegrationError("test client: JACK cycles stopped") }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
    }

    func stopPlaying() throws {
        state.pointee.sync[0].store(0, ordering: .releasing)
        let start = cycles
        let deadline = ContinuousClock.now + .seconds(10)
        while cycles < start + 2 {
            if ContinuousClock.now >= deadline { throw IntegrationError("test client: JACK cycles stopped") }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
    }

    /// Starts looping `signals` (one per channel; one signal is used for every channel)
    /// and recording `recordFrames` frames per channel.
    private func startJob(_ signals: [[Float]], recordFrames: Int) throws -> Int {
        let s = state.pointee
        let length = signals.map(\.count).max() ?? 0
        precondition(length > 0 && length <= s.playCapacity, "signal length \(length) exceeds capacity")
        precondition(recordFrames <= s.recordCapacity, "capture length \(recordFrames) exceeds capacity")
        precondition(signals.count == 1 || signals.count == channelCount)
        try stopPlaying()
        for channel in 0..<channelCount {
            let signal = signals.count == 1 ? signals[0] : signals[channel]
            precondition(signal.count == length, "signals must have equal lengths")
            let destination = s.play + channel * s.playCapacity
            signal.withUnsafeBufferPointer { destination.update(from: $0.baseAddress!, count: length) }
        }
        state.pointee.jobPlayLength = length
        state.pointee.jobRecordLength = recordFrames
        nextJob += 1
        state.pointee.sync[0].store(nextJob, ordering: .releasing)
        return nextJob
    }

    /// Loops `signals` until the next job or `stopPlaying()`, without recording.
    func startPlaying(_ signals: [[Float]]) throws {
        _ = try startJob(signals, recordFrames: 0)
    }

    /// Xruns the server reported since this client opened.
    var xruns: Int { state.pointee.sync[3].load(ordering: .acquiring) }

    /// Plays `signals` (looped) and returns `frames` frames captured on every input port,
    /// starting with the cycle that started playing. The start includes the graph's latency
    /// and any transient: measure on a later window.
    ///
    /// A capture during which the server reported an xrun has a dropout (on a busy machine a
    /// non-realtime jackd misses deadlines); it is thrown away and taken again, up to
    /// `attempts` times, so measurements see only glitch-free signals.
    func capture(_ signals: [[Float]], frames: Int, attempts: Int = 5) throws -> [[Float]] {
        var result: [[Float]] = []
        for attempt in 1...attempts {
            let before = xruns
            result = try captureOnce(signals, frames: frames)
            if xruns == before { return result }
            print("note: xrun during capture \(attempt) of \(attempts); \(attempt < attempts ? "capturing again" : "keeping it")")
        }
        return result
    }

    private func captureOnce(_ signals: [[Float]], frames: Int) throws -> [[Float]] {
        let job = try startJob(signals, recordFrames: frames)
        let deadline = ContinuousClock.now + .seconds(10 + 10 * Double(frames) / sampleRate)
        while state.pointee.sync[1].load(ordering: .acquiring) != job {
            if ContinuousClock.now >= deadline {
                throw IntegrationError("test client: capture of \(frames) frames did not finish")
            }
            Thread.sleep(forTimeInterval: 0.005)  // polls a condition (with a deadline)
        }
        let s = state.pointee
        let result = (0..<channelCount).map { channel in
            Array(UnsafeBufferPointer(start: s.record + channel * s.recordCapacity, count: frames))
        }
        try stopPlaying()
        return result
    }
}

/// Signals and alignment-free measurements for the captures.
enum Capture {
    static let sampleRate = Double(TestJackServer.sampleRate)
    /// Frames played per signal period buffer: one second holds a whole number of periods of
    /// every integer frequency, so the loop is seamless.
    static let loopFrames = TestJackServer.sampleRate
    /// Captures are 0.75 s; measurements use 0.5 s after discarding the first 0.25 s
    /// (graph latency, filter and gain transients).
    static let captureFrames = 36000
    static let discardFrames = 12000
    static let measureFrames = 24000

    /// Amplitude of `-20 dBFS` (peak), the level used throughout.
    static let minus20dBFS = 0.1

    static func tone(_ frequency: Double, amplitude: Double = minus20dBFS) -> [Float] {
        Meter.sine(frequency: frequency, amplitude: amplitude, sampleRate: sampleRate, count: loopFrames)
    }

    /// The steady part of a capture.
    static func steady(_ samples: [Float]) -> [Float] {
        Array(samples[discardFrames..<(discardFrames + measureFrames)])
    }

    /// Level of the tone at `frequency` in the steady part of `samples`, relative to `reference`, in dB.
    static func toneLevel(_ samples: [Float], frequency: Double, reference: Double = minus20dBFS) -> Double {
        let amplitude = Meter.toneAmplitude(steady(samples), frequency: frequency, sampleRate: sampleRate)
        return Meter.decibels(amplitude / reference)
    }

    /// Deterministic uniform noise in ±amplitude (a 64-bit LCG), one loop long.
    static func noise(seed: UInt64, amplitude: Float = 0.17) -> [Float] {
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<loopFrames).map { _ in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            let unit = Float(x >> 40) / Float(1 << 24)  // [0, 1)
            return (unit * 2 - 1) * amplitude
        }
    }

    /// The lag L (0..<played.count) for which `captured[n] == played[(n - L) mod count]`
    /// bit for bit over the whole steady window, or nil when none does.
    static func bitExactLag(captured: [Float], played: [Float]) -> Int? {
        let window = steady(captured)
        let start = discardFrames
        let count = played.count
        func matches(_ lag: Int, upTo limit: Int) -> Bool {
            for offset in 0..<limit {
                let n = start + offset
                let index = ((n - lag) % count + count) % count
                if window[offset].bitPattern != played[index].bitPattern { return false }
            }
            return true
        }
        for lag in 0..<count where matches(lag, upTo: 32) {
            if matches(lag, upTo: window.count) { return lag }
        }
        return nil
    }
}

/// The measurement helpers (`Measurement` alone would also name Foundation's type).
typealias Meter = SoundFitTestSupport.Measurement

/// Opens a JACK client of the test suite named exactly `name` on the running `server` (never
/// starting one), with JACK's own messages silenced; `role` names it in the error.
func openTestJackClient(_ name: String, on server: String, role: String) throws -> OpaquePointer {
    JackMessages.silence()
    var status = jack_status_t(rawValue: 0)
    let options = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
    guard let client = soundfit_jack_client_open(name, options, &status, server) else {
        throw IntegrationError("\(role) '\(name)' cannot open on server '\(server)' (status 0x\(String(status.rawValue, radix: 16)))")
    }
    return client
}
