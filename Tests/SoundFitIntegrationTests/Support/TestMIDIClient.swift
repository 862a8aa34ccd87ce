import CJack
import Foundation
import Synchronization

/// What the MIDI test client's process callback touches: its port and a preallocated
/// single-producer single-consumer ring of messages (each word: size in the top byte, then up
/// to three message bytes). Plain pointers only; nothing retains.
struct TestMIDIRealtimeState {
    let port: OpaquePointer
    let ring: UnsafeMutablePointer<Atomic<UInt32>>
    /// [0] messages written by the test (head), [1] messages sent by the callback (tail).
    let counters: UnsafeMutablePointer<Atomic<Int>>
    static let capacity = 4096
    /// Messages per cycle at most (a JACK MIDI buffer holds a few hundred short events).
    static let perCycle = 64
}

/// The MIDI test client's process callback: clears its output buffer and writes the waiting
/// messages, up to `perCycle`, at frames 0, 1, 2… Real-time thread: no allocation.
func testMIDIProcessCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let state = arg.assumingMemoryBound(to: TestMIDIRealtimeState.self).pointee
    guard let buffer = jack_port_get_buffer(state.port, frames) else { return 0 }
    jack_midi_clear_buffer(buffer)
    let head = state.counters[0].load(ordering: .acquiring)
    var tail = state.counters[1].load(ordering: .relaxed)
    var frame: jack_nframes_t = 0
    while tail != head, frame < frames, Int(frame) < TestMIDIRealtimeState.perCycle {
        let word = state.ring[tail % TestMIDIRealtimeState.capacity].load(ordering: .relaxed)
        var bytes = (UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word))
        let written = withUnsafeBytes(of: &bytes) { raw in
            jack_midi_event_write(buffer, frame, raw.baseAddress!.assumingMemoryBound(to: jack_midi_data_t.self), Int(word >> 24))
        }
        guard written == 0 else { break }
        tail += 1
        frame += 1
    }
    state.counters[1].store(tail, ordering: .releasing)
    return 0
}

/// A JACK client written for the tests with one MIDI output port, `midi_out`: a fader box.
/// `send` queues a message; the process callback writes it into the next cycle's buffer with
/// `jack_midi_event_write`.
final class TestMIDIClient: @unchecked Sendable {
    let name: String
    private var client: OpaquePointer?
    private let state: UnsafeMutablePointer<TestMIDIRealtimeState>

    init(server: String, name: String = "sfmidi") throws {
        let client = try openTestJackClient(name, on: server, role: "MIDI test client")
        self.client = client
        self.name = String(cString: jack_get_client_name(client))
        guard let port = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
            jack_client_close(client)
            throw IntegrationError("MIDI test client cannot register its port")
        }
        let ring = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: TestMIDIRealtimeState.capacity)
        for index in 0..<TestMIDIRealtimeState.capacity { (ring + index).initialize(to: Atomic(0)) }
        let counters = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 2)
        for index in 0..<2 { (counters + index).initialize(to: Atomic(0)) }
        state = .allocate(capacity: 1)
        state.initialize(to: TestMIDIRealtimeState(port: port, ring: ring, counters: counters))
        guard jack_set_process_callback(client, testMIDIProcessCallback, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0 else {
            close()
            throw IntegrationError("MIDI test client cannot activate")
        }
    }

    /// `<name>:midi_out`.
    var port: String { "\(name):midi_out" }

    /// Connects `midi_out` to `destination` (a full port name).
    func connect(to destination: String) throws {
        guard let client else { throw IntegrationError("MIDI test client closed") }
        let result = jack_connect(client, port, destination)
        guard result == 0 || result == EEXIST else { throw IntegrationError("cannot connect \(port) -> \(destination) (error \(result))") }
    }

    /// Queues one message of one to three bytes; waits while the ring is full.
    func send(_ bytes: UInt8...) {
        precondition((1...3).contains(bytes.count))
        var word = UInt32(bytes.count) << 24
        for (index, byte) in bytes.enumerated() { word |= UInt32(byte) << (16 - 8 * index) }
        let head = state.pointee.counters[0].load(ordering: .relaxed)
        while head - state.pointee.counters[1].load(ordering: .acquiring) >= TestMIDIRealtimeState.capacity {
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
        state.pointee.ring[head % TestMIDIRealtimeState.capacity].store(word, ordering: .relaxed)
        state.pointee.counters[0].store(head + 1, ordering: .releasing)
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
        while state.pointee.counters[1].load(ordering: .acquiring) != state.pointee.counters[0].load(ordering: .relaxed) {
            if ContinuousClock.now >= deadline { throw IntegrationError("MIDI test client: messages not sent (JACK cycles stopped?)") }
            Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
        }
    }

    /// Deactivates and closes the client. Idempotent.
    func close() {
        guard let client else { return }
        jack_deactivate(client)
        jack_client_close(client)
        self.client = nil
    }

    deinit {
        close()
        state.pointee.ring.deinitialize(count: TestMIDIRealtimeState.capacity)
        state.pointee.ring.deallocate()
        state.pointee.counters.deinitialize(count: 2)
        state.pointee.counters.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }
}
