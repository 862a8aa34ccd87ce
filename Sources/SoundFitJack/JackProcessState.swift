import CJack
import SoundFitDSP
import SoundFitEngine

/// Everything the process callback touches, allocated before activation and freed after
/// `jack_client_close`. Plain pointers and a `~Copyable` renderer: nothing here retains.
struct JackProcessState: ~Copyable {
    var renderer: RealtimeRenderer
    let channelCount: Int
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    let outputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputBuffers: UnsafeMutablePointer<UnsafePointer<Float>>
    let outputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The sample rate the renderer was prepared for; compared with the server's each cycle.
    var sampleRate: Double
    /// The MIDI control input port and where its messages go (nil: no MIDI control).
    var midiPort: OpaquePointer?
    let midi: RealtimeMIDIControl?

    init(renderer: consuming RealtimeRenderer, channelCount: Int, sampleRate: Double, midi: RealtimeMIDIControl?) {
        self.renderer = renderer
        self.midi = midi
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        inputPorts = .allocate(capacity: channelCount)
        inputPorts.initialize(repeating: nil, count: channelCount)
        outputPorts = .allocate(capacity: channelCount)
        outputPorts.initialize(repeating: nil, count: channelCount)
        // Placeholders until the first cycle fills in JACK's buffers.
        let placeholder = UnsafeMutablePointer<Float>(bitPattern: 0x10)!
        inputBuffers = .allocate(capacity: channelCount)
        inputBuffers.initialize(repeating: UnsafePointer(placeholder), count: channelCount)
        outputBuffers = .allocate(capacity: channelCount)
        outputBuffers.initialize(repeating: placeholder, count: channelCount)
    }

    deinit {
        inputPorts.deallocate()
        outputPorts.deallocate()
        inputBuffers.deallocate()
        outputBuffers.deallocate()
    }

    /// One JACK cycle of `client`. Real-time safe: may only be called from the process callback.
    /// The cycle's span on JACK's clock (`jack_get_cycle_times`, a read of the server's timer
    /// in shared memory) places scheduled changes on their frames.
    ///
    /// Freewheeling, a cycle's frames stand for no span of wall-clock time (cycles follow each
    /// other as fast as they are computed) and JACK's cycle-time estimate follows the nominal
    /// period, not the cycles. A change scheduled for a moment then takes effect at the first
    /// frame of the first cycle that starts at or after that moment: the cycle's span is the
    /// present microsecond (`jack_get_time`, a vDSO clock read on the engine clock).
    @inline(__always)
    mutating func process(client: OpaquePointer, frames: jack_nframes_t, serverSampleRate: Double,
                          freewheeling: Bool, midiSourceConnected: Bool) -> UInt64 {
        if serverSampleRate != sampleRate, serverSampleRate > 0 {
            sampleRate = serverSampleRate
            renderer.setSampleRate(serverSampleRate)
        }
        for channel in 0..<channelCount {
            let input = jack_port_get_buffer(inputPorts[channel], frames)!
            let output = jack_port_get_buffer(outputPorts[channel], frames)!
            inputBuffers[channel] = UnsafePointer(input.assumingMemoryBound(to: Float.self))
            outputBuffers[channel] = output.assumingMemoryBound(to: Float.self)
        }
        if midiSourceConnected { receiveMIDI(frames: frames) }
        // The cycle's time only serves scheduled changes: with none waiting, JACK is not asked.
        let time: CycleTime?
        if !renderer.mayHaveScheduledChanges {
            time = nil
        } else if freewheeling {
            let now = jack_get_time()
            time = CycleTime(startMicroseconds: now, endMicroseconds: now &+ 1)
        } else {
            var firstFrame: jack_nframes_t = 0
            var start: jack_time_t = 0, end: jack_time_t = 0
            var period: Float = 0
            time = jack_get_cycle_times(client, &firstFrame, &start, &end, &period) == 0
                ? CycleTime(startMicroseconds: start, endMicroseconds: end) : nil
        }
        return renderer.render(inputs: inputBuffers, outputs: outputBuffers, frameCount: Int(frames), time: time)
    }

    /// Hands every message of this cycle's MIDI input to the MIDI control (before rendering, so
    /// nothing waits a cycle more than it must). Real-time safe: `jack_midi_event_get` reads the
    /// port's buffer in place; `receive` stores atomics. Called only while a source is connected
    /// (the port-connect callback's flag): without one no event can come, and JACK would clear
    /// the port's buffer for us every cycle.
    @inline(__always)
    private func receiveMIDI(frames: jack_nframes_t) {
        guard let midi, let midiPort, let buffer = jack_port_get_buffer(midiPort, frames) else { return }
        let count = jack_midi_get_event_count(buffer)
        var event = jack_midi_event_t()
        for index in 0..<count {
            guard jack_midi_event_get(&event, buffer, index) == 0, event.size >= 2, let bytes = event.buffer else { continue }
            midi.receive(status: bytes[0], data1: bytes[1], data2: event.size >= 3 ? bytes[2] : 0)
        }
    }
}
