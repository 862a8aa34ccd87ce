import CJack
import Foundation
import Glibc
import SoundFitTestSupport
import Synchronization
import Testing

/// What a test JACK client does in its process callback; a client has one role or several.
struct TestJackRoles: OptionSet, Sendable {
    let rawValue: Int
    /// Output ports `out_i`: loops the loaded signals (silence while idle).
    static let player = TestJackRoles(rawValue: 1 << 0)
    /// Input ports `in_i`: records a job's frames, with the JACK frame time of every cycle.
    static let recorder = TestJackRoles(rawValue: 1 << 1)
    /// Input ports `in_i`: keeps the last frames in a ring, always (a listener's ears).
    static let listener = TestJackRoles(rawValue: 1 << 2)
    /// One MIDI output port `midi_out`: writes the queued messages into the next cycle (a fader box).
    static let midiSource = TestJackRoles(rawValue: 1 << 3)
}

/// Everything the test client's process callback touches: plain pointers and integers,
/// allocated before activation and freed after `jack_client_close`. Nothing here retains.
struct TestClientRealtimeState {
    let roles: TestJackRoles
    let channelCount: Int
    /// The JACK client (for `jack_last_frame_time`), set before activation.
    var client: OpaquePointer?
    let outputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    var midiPort: OpaquePointer?
    /// Player: channel-major signal to play, `playCapacity` frames per channel, looped.
    let play: UnsafeMutablePointer<Float>
    let playCapacity: Int
    /// Recorder: channel-major capture; listener: channel-major ring; `recordCapacity` frames per channel.
    let record: UnsafeMutablePointer<Float>
    let recordCapacity: Int
    /// Recorder: per recorded cycle, the JACK frame time of the cycle and the capture index of
    /// its first frame.
    let cycleFrames: UnsafeMutablePointer<UInt32>
    let cycleStarts: UnsafeMutablePointer<Int>
    let cycleCapacity: Int
    /// MIDI source: a single-producer single-consumer ring of messages (each word: size in the
    /// top byte, then up to three message bytes).
    let midi: UnsafeMutablePointer<Atomic<UInt32>>
    static let midiCapacity = 4096
    /// MIDI messages per cycle at most (a JACK MIDI buffer holds a few hundred short events).
    static let midiPerCycle = 64
    /// [0] requested job (0 = idle: silence), [1] last job whose recording is complete,
    /// [2] cycles run, [3] xruns the server reported, [4] cycles recorded in the current job,
    /// [5] frames the listener heard, [6] MIDI messages queued by the test, [7] MIDI messages
    /// sent by the callback. The job parameters below are written while no job runs and
    /// published by the release-store of a new job number.
    let sync: UnsafeMutablePointer<Atomic<Int>>
    static let syncCount = 8
    var jobPlayLength = 0
    var jobRecordLength = 0
    // Owned by the audio thread.
    var currentJob = 0
    var playPosition = 0
    var recordPosition = 0
    var cycleIndex = 0
}

/// The test client's process callback: each role's part in turn. Real-time thread: pointer
/// arithmetic and atomics only, no allocation, no locks, no retain/release.
func testClientProcessCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let state = arg.assumingMemoryBound(to: TestClientRealtimeState.self)
    let job = state.pointee.sync[0].load(ordering: .acquiring)
    if job != state.pointee.currentJob {
        state.pointee.currentJob = job
        state.pointee.playPosition = 0
        state.pointee.recordPosition = 0
        state.pointee.cycleIndex = 0
    }
    let roles = state.pointee.roles
    if roles.contains(.player) { playCycle(state, frames, job: job) }
    if roles.contains(.recorder) && job != 0 { recordCycle(state, frames, job: job) }
    if roles.contains(.listener) { listenCycle(state, frames) }
    if roles.contains(.midiSource) { sendMIDICycle(state, frames) }
    state.pointee.sync[2].add(1, ordering: .releasing)
    return 0
}

/// Player: the job's signals on every output port, looped; silence while idle or when the job
/// plays nothing. Real-time thread.
private func playCycle(_ state: UnsafeMutablePointer<TestClientRealtimeState>, _ frames: jack_nframes_t, job: Int) {
    let count = Int(frames)
    let length = state.pointee.jobPlayLength
    let start = state.pointee.playPosition
    for channel in 0..<state.pointee.channelCount {
        guard let raw = jack_port_get_buffer(state.pointee.outputPorts[channel], frames) else { continue }
        let output = raw.assumingMemoryBound(to: Float.self)
        if job == 0 || length == 0 {
            output.update(repeating: 0, count: count)
            continue
        }
        let source = state.pointee.play + channel * state.pointee.playCapacity
        var position = start
        for frame in 0..<count {
            output[frame] = source[position]
            position += 1
            if position == length { position = 0 }
        }
    }
    if job != 0 && length > 0 { state.pointee.playPosition = (start + count) % length }
}

/// Recorder: every input port into the job's capture until it holds the job's frames, with
/// the frame time of each recorded cycle. Real-time thread.
private func recordCycle(_ state: UnsafeMutablePointer<TestClientRealtimeState>, _ frames: jack_nframes_t, job: Int) {
    let length = state.pointee.jobRecordLength
    let position = state.pointee.recordPosition
    guard position < length else { return }
    let toRecord = min(Int(frames), length - position)
    let index = state.pointee.cycleIndex
    if index < state.pointee.cycleCapacity, let client = state.pointee.client {
        state.pointee.cycleFrames[index] = jack_last_frame_time(client)
        state.pointee.cycleStarts[index] = position
        state.pointee.cycleIndex = index + 1
        state.pointee.sync[4].store(index + 1, ordering: .releasing)
    }
    for channel in 0..<state.pointee.channelCount {
        guard let raw = jack_port_get_buffer(state.pointee.inputPorts[channel], frames) else { continue }
        let destination = state.pointee.record + channel * state.pointee.recordCapacity + position
        destination.update(from: raw.assumingMemoryBound(to: Float.self), count: toRecord)
    }
    state.pointee.recordPosition = position + toRecord
    if position + toRecord == length { state.pointee.sync[1].store(job, ordering: .releasing) }
}

/// Listener: every input port into the ring. Real-time thread.
private func listenCycle(_ state: UnsafeMutablePointer<TestClientRealtimeState>, _ frames: jack_nframes_t) {
    let count = Int(frames)
    let ringFrames = state.pointee.recordCapacity
    let start = state.pointee.sync[5].load(ordering: .relaxed)
    for channel in 0..<state.pointee.channelCount {
        guard let raw = jack_port_get_buffer(state.pointee.inputPorts[channel], frames) else { continue }
        let input = raw.assumingMemoryBound(to: Float.self)
        let ring = state.pointee.record + channel * ringFrames
        for frame in 0..<count { ring[(start + frame) % ringFrames] = input[frame] }
    }
    state.pointee.sync[5].store(start + count, ordering: .releasing)
}

/// MIDI source: clears the output buffer and writes the waiting messages, up to
/// `midiPerCycle`, at frames 0, 1, 2… Real-time thread.
private func sendMIDICycle(_ state: UnsafeMutablePointer<TestClientRealtimeState>, _ frames: jack_nframes_t) {
    guard let port = state.pointee.midiPort, let buffer = jack_port_get_buffer(port, frames) else { return }
    jack_midi_clear_buffer(buffer)
    let ring = state.pointee.midi
    let head = state.pointee.sync[6].load(ordering: .acquiring)
    var tail = state.pointee.sync[7].load(ordering: .relaxed)
    var frame: jack_nframes_t = 0
    while tail != head, frame < frames, Int(frame) < TestClientRealtimeState.midiPerCycle {
        let word = ring[tail % TestClientRealtimeState.midiCapacity].load(ordering: .relaxed)
        var bytes = (UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word))
        let written = withUnsafeBytes(of: &bytes) { raw in
            jack_midi_event_write(buffer, frame, raw.baseAddress!.assumingMemoryBound(to: jack_midi_data_t.self), Int(word >> 24))
        }
        guard written == 0 else { break }
        tail += 1
        frame += 1
    }
    state.pointee.sync[7].store(tail, ordering: .releasing)
}

/// The server reports an xrun (a client missed its deadline: a glitch in the signals).
/// Notification thread.
func testClientXrunCallback(_ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    arg.assumingMemoryBound(to: TestClientRealtimeState.self).pointee.sync[3].add(1, ordering: .releasing)
    return 0
}

/// The JACK client the tests play, record, listen and send MIDI with, in the roles it is opened
/// with: N output ports `out_i` (player), N input ports `in_i` (recorder or listener), one MIDI
/// output `midi_out` (MIDI source). With player and recorder (the default), `capture` plays a
/// signal through whatever is connected and returns what came back.
final class TestJackClient: @unchecked Sendable {
    let name: String
    let roles: TestJackRoles
    let channelCount: Int
    let sampleRate: Double
    /// Frames per cycle.
    let period: Int
    private var client: OpaquePointer?
    private let state: UnsafeMutablePointer<TestClientRealtimeState>
    private var nextJob = 0
    private var recordingJob = 0
    /// Xruns counted when the last job started.
    private var xrunsAtJobStart = 0

    /// `recordCapacity`: frames per channel a recording holds, or the listener's ring (nil: 2 s
    /// for a recorder, 4 s for a listener).
    init(server: String, name: String = "sftest", channels: Int = 0, roles: TestJackRoles = [.player, .recorder],
         playCapacity: Int = 48000, recordCapacity: Int? = nil) throws {
        precondition(!roles.isSuperset(of: [.recorder, .listener]), "recorder and listener both need in_i")
        JackMessages.silence()
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
        // A running server can fail an open when it does not answer in time (JackServerFailed):
        // it happened once with five test processes starting their servers and clients at
        // once. Such an open is tried again for a few seconds, and says so.
        let deadline = ContinuousClock.now + .seconds(5)
        var opened = soundfit_jack_client_open(name, options, &status, server)
        while opened == nil, status.rawValue & JackServerFailed.rawValue != 0, ContinuousClock.now < deadline {
            print("note: test client '\(name)' could not open on server '\(server)' (status 0x\(String(status.rawValue, radix: 16))); trying again")
            Thread.sleep(forTimeInterval: 0.2)  // backoff before a retry
            opened = soundfit_jack_client_open(name, options, &status, server)
        }
        guard let client = opened else {
            throw IntegrationError("test client '\(name)' cannot open on server '\(server)' (status 0x\(String(status.rawValue, radix: 16)))")
        }
        self.client = client
        self.name = String(cString: jack_get_client_name(client))
        self.roles = roles
        channelCount = channels
        sampleRate = Double(jack_get_sample_rate(client))
        period = Int(jack_get_buffer_size(client))

        let playCapacity = roles.contains(.player) ? playCapacity : 1
        let recordCapacity = roles.contains(.listener) ? recordCapacity ?? Int(sampleRate) * 4
            : roles.contains(.recorder) ? recordCapacity ?? 96000 : 1
        let cycleCapacity = roles.contains(.recorder) ? recordCapacity / 16 + 2 : 1
        let midiCapacity = roles.contains(.midiSource) ? TestClientRealtimeState.midiCapacity : 1
        let sync = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: TestClientRealtimeState.syncCount)
        for index in 0..<TestClientRealtimeState.syncCount { (sync + index).initialize(to: Atomic(0)) }
        let play = UnsafeMutablePointer<Float>.allocate(capacity: max(channels, 1) * playCapacity)
        play.initialize(repeating: 0, count: max(channels, 1) * playCapacity)
        let record = UnsafeMutablePointer<Float>.allocate(capacity: max(channels, 1) * recordCapacity)
        record.initialize(repeating: 0, count: max(channels, 1) * recordCapacity)
        let cycleFrames = UnsafeMutablePointer<UInt32>.allocate(capacity: cycleCapacity)
        cycleFrames.initialize(repeating: 0, count: cycleCapacity)
        let cycleStarts = UnsafeMutablePointer<Int>.allocate(capacity: cycleCapacity)
        cycleStarts.initialize(repeating: 0, count: cycleCapacity)
        let midi = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: midiCapacity)
        for index in 0..<midiCapacity { (midi + index).initialize(to: Atomic(0)) }
        let outputs = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(channels, 1))
        outputs.initialize(repeating: nil, count: max(channels, 1))
        let inputs = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(channels, 1))
        inputs.initialize(repeating: nil, count: max(channels, 1))
        state = .allocate(capacity: 1)
        state.initialize(to: TestClientRealtimeState(
            roles: roles, channelCount: channels, client: client, outputPorts: outputs, inputPorts: inputs, midiPort: nil,
            play: play, playCapacity: playCapacity, record: record, recordCapacity: recordCapacity,
            cycleFrames: cycleFrames, cycleStarts: cycleStarts, cycleCapacity: cycleCapacity, midi: midi, sync: sync))

        func register(_ port: String, _ type: String, _ flags: JackPortFlags) throws -> OpaquePointer {
            guard let handle = jack_port_register(client, port, type, UInt(flags.rawValue), 0) else {
                close()
                throw IntegrationError("test client '\(self.name)' cannot register \(port)")
            }
            return handle
        }
        for channel in 0..<channels {
            if roles.contains(.player) { outputs[channel] = try register("out_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput) }
            if !roles.isDisjoint(with: [.recorder, .listener]) {
                inputs[channel] = try register("in_\(channel + 1)", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput)
            }
        }
        if roles.contains(.midiSource) { state.pointee.midiPort = try register("midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput) }
        guard jack_set_process_callback(client, testClientProcessCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_set_xrun_callback(client, testClientXrunCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0
        else {
            close()
            throw IntegrationError("test client '\(self.name)' cannot activate")
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
        s.sync.deinitialize(count: TestClientRealtimeState.syncCount)
        s.sync.deallocate()
        s.play.deallocate()
        s.record.deallocate()
        s.cycleFrames.deallocate()
        s.cycleStarts.deallocate()
        s.midi.deinitialize(count: roles.contains(.midiSource) ? TestClientRealtimeState.midiCapacity : 1)
        s.midi.deallocate()
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

    /// Connects `<source>:output_i` → `in_i` for every channel (a listener's ears on `source`).
    func listen(to source: String) throws {
        for channel in 1...channelCount { try connect("\(source):output_\(channel)", "\(name):in_\(channel)") }
    }

    /// `<name>:midi_out`.
    var midiPort: String { "\(name):midi_out" }

    /// Connects `midi_out` to SoundFit's `midi_in` (`client`: SoundFit's client name) and returns
    /// once SoundFit noted the connection (`/status port_connections`, counted from JACK's
    /// port-connect callback): SoundFit reads its MIDI port only from then on.
    func connectMIDI(toSoundFit client: String, osc: OSCTestClient) throws {
        let noted = try #require(try osc.status()["port_connections"]?.number)
        let made = try connect(midiPort, "\(client):midi_in")
        // A connection that existed already (SoundFit restored it) is noted as SoundFit made it.
        let expected = made ? noted + 1 : 1
        _ = try osc.waitForStatus(timeout: .seconds(10)) { ($0["port_connections"]?.number ?? 0) >= expected }
    }

    /// Connects `source` to `destination`; true when this call made the connection, false when
    /// it existed already.
    @discardableResult
    func connect(_ source: String, _ destination: String) throws -> Bool {
        guard let client else { throw IntegrationError("test client closed") }
        let result = jack_connect(client, source, destination)
        guard result == 0 || result == EEXIST else {
            throw IntegrationError("cannot connect \(source) -> \(destination) (error \(result))")
        }
        return result == 0
    }

    func disconnect(_ source: String, _ destination: String) throws {
        guard let client else { throw IntegrationError("test client closed") }
        let result = jack_disconnect(client, source, destination)
        guard result == 0 else { throw IntegrationError("cannot disconnect \(source) -> \(destination) (error \(result))") }
    }

    /// Full names of the ports whose names match the regular expression `pattern`.
    func ports(matching pattern: String, flags: UInt32 = 0) -> [String] {
        guard let client else { return [] }
        return names(jack_get_ports(client, pattern, nil, UInt(flags)))
    }

    /// Whether `port` is an audio input or output port of the graph, per its flags.
    func portFlags(_ port: String) -> Int32? {
        guard let client, let handle = jack_port_by_name(client, port) else { return nil }
        return jack_port_flags(handle)
    }

    /// Full names of the ports `port` is connected to.
    func connections(of port: String) -> [String] {
        guard let client, let handle = jack_port_by_name(client, port) else { return [] }
        return names(jack_port_get_all_connections(client, handle))
    }

    /// The names in a list JACK allocated, which is then freed.
    private func names(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
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

    /// Xruns the server reported since this client opened.
    var xruns: Int { state.pointee.sync[3].load(ordering: .acquiring) }

    /// Waits until the callback has run `count` more cycles.
    private func waitCycles(_ count: Int) throws {
        let start = cycles
        let deadline = ContinuousClock.now + .seconds(10)
        while cycles < start + count {
            if ContinuousClock.now >= deadline { throw IntegrationError("test client: JACK cycles stopped") }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
    }

    // MARK: Player and recorder

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

    /// Stops the current job (outputs silence) and waits until the callback no longer touches
    /// the play and record buffers.
    func stopPlaying() throws {
        state.pointee.sync[0].store(0, ordering: .releasing)
        try waitCycles(2)
    }

    /// Starts looping `signals` (one per channel; one signal is used for every channel)
    /// and recording `recordFrames` frames per channel.
    private func startJob(_ signals: [[Float]], recordFrames: Int) throws -> Int {
        let s = state.pointee
        let length = signals.map(\.count).max() ?? 0
        precondition(signals.isEmpty || length > 0 && length <= s.playCapacity, "signal length \(length) exceeds capacity")
        precondition(recordFrames <= s.recordCapacity, "capture length \(recordFrames) exceeds capacity")
        precondition(signals.count <= 1 || signals.count == channelCount)
        try stopPlaying()
        for channel in 0..<channelCount where !signals.isEmpty {
            let signal = signals.count == 1 ? signals[0] : signals[channel]
            precondition(signal.count == length, "signals must have equal lengths")
            let destination = s.play + channel * s.playCapacity
            signal.withUnsafeBufferPointer { destination.update(from: $0.baseAddress!, count: length) }
        }
        state.pointee.jobPlayLength = length
        state.pointee.jobRecordLength = recordFrames
        xrunsAtJobStart = xruns
        nextJob += 1
        state.pointee.sync[0].store(nextJob, ordering: .releasing)
        return nextJob
    }

    /// Loops `signals` until the next job or `stopPlaying()`, without recording.
    func startPlaying(_ signals: [[Float]]) throws {
        precondition(!signals.isEmpty)
        _ = try startJob(signals, recordFrames: 0)
    }

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
        try waitForRecording(job, frames: frames)
        let s = state.pointee
        let result = (0..<channelCount).map { channel in
            Array(UnsafeBufferPointer(start: s.record + channel * s.recordCapacity, count: frames))
        }
        try stopPlaying()
        return result
    }

    private func waitForRecording(_ job: Int, frames: Int) throws {
        let deadline = ContinuousClock.now + .seconds(10 + 10 * Double(frames) / sampleRate)
        while state.pointee.sync[1].load(ordering: .acquiring) != job {
            if ContinuousClock.now >= deadline {
                throw IntegrationError("test client: recording of \(frames) frames did not finish")
            }
            Thread.sleep(forTimeInterval: 0.005)  // polls a condition (with a deadline)
        }
    }

    /// Starts recording `frames` frames per channel from the next cycle on, playing silence;
    /// returns at once.
    func startRecording(frames: Int) throws {
        precondition(frames > 0)
        recordingJob = try startJob([], recordFrames: frames)
    }

    /// Waits until the recording started by `startRecording` is complete and returns it.
    func finishRecording() throws -> TimedRecording {
        let s = state.pointee
        let frames = s.jobRecordLength
        try waitForRecording(recordingJob, frames: frames)
        let cycles = s.sync[4].load(ordering: .acquiring)
        let recording = TimedRecording(
            channels: (0..<channelCount).map { Array(UnsafeBufferPointer(start: s.record + $0 * s.recordCapacity, count: frames)) },
            cycleFrames: Array(UnsafeBufferPointer(start: s.cycleFrames, count: cycles)),
            cycleStarts: Array(UnsafeBufferPointer(start: s.cycleStarts, count: cycles)),
            period: period, xruns: xruns - xrunsAtJobStart)
        try stopPlaying()
        return recording
    }

    /// How many cycles the current recording has taken so far.
    var cyclesRecorded: Int { state.pointee.sync[4].load(ordering: .acquiring) }

    // MARK: Clock

    /// The current JACK frame time (an estimate of the frame being played now).
    var frameTime: UInt32 {
        guard let client else { return 0 }
        return jack_frame_time(client)
    }

    /// JACK's clock now, microseconds (`jack_get_time`: `CLOCK_MONOTONIC_RAW` on Linux).
    var jackTime: UInt64 {
        guard client != nil else { return 0 }
        return jack_get_time()
    }

    /// The JACK frame time at JACK time `microseconds` (`jack_time_to_frames`, the server's own
    /// estimate from its cycle timer).
    func frameTime(atJackTime microseconds: UInt64) -> UInt32 {
        guard let client else { return 0 }
        return jack_time_to_frames(client, microseconds)
    }

    // MARK: Listener

    /// Frames heard so far (the ring's write position is this modulo `ringFrames`).
    var framesHeard: Int { state.pointee.sync[5].load(ordering: .acquiring) }

    /// Waits until `frame` frames were heard: the listener's clock is the audio it hears, one
    /// JACK cycle at a time. False when `timeout` passed first (the server stalled or stopped).
    func waitUntilHeard(_ frame: Int, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while framesHeard < frame {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
        return true
    }

    /// Frames per channel the ring keeps.
    var ringFrames: Int { state.pointee.recordCapacity }

    /// Sample `frame` (counted since the client opened) of `channel` from the ring: valid while
    /// fewer than `ringFrames` frames were heard after it.
    func heardSample(_ channel: Int, _ frame: Int) -> Float {
        let ringFrames = state.pointee.recordCapacity
        return state.pointee.record[channel * ringFrames + frame % ringFrames]
    }

    // MARK: MIDI source

    /// Queues one message of one to three bytes; waits while the ring is full.
    func send(_ bytes: UInt8...) {
        precondition((1...3).contains(bytes.count) && roles.contains(.midiSource))
        var word = UInt32(bytes.count) << 24
        for (index, byte) in bytes.enumerated() { word |= UInt32(byte) << (16 - 8 * index) }
        let head = state.pointee.sync[6].load(ordering: .relaxed)
        while head - state.pointee.sync[7].load(ordering: .acquiring) >= TestClientRealtimeState.midiCapacity {
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
        state.pointee.midi[head % TestClientRealtimeState.midiCapacity].store(word, ordering: .relaxed)
        state.pointee.sync[6].store(head + 1, ordering: .releasing)
    }

    /// Control change `controller` = `value` on `channel` (1…16, as musicians count).
    func controlChange(channel: Int, controller: Int, value: Int) {
        send(0xB0 | UInt8(channel - 1), UInt8(controller), UInt8(value))
    }

    /// Program change `program` (0-based, as sent) on `channel` (1…16).
    func programChange(channel: Int, program: Int) {
        send(0xC0 | UInt8(channel - 1), UInt8(program))
    }

    /// Waits until the callback has written every queued message into a cycle.
    func waitUntilSent(timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now + timeout
        while state.pointee.sync[7].load(ordering: .acquiring) != state.pointee.sync[6].load(ordering: .relaxed) {
            if ContinuousClock.now >= deadline { throw IntegrationError("MIDI test client: messages not sent (JACK cycles stopped?)") }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
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
