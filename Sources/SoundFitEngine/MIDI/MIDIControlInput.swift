import Synchronization

/// What the audio thread found in a MIDI stream, for the control side.
public enum MIDIControlEvent: Sendable, Equatable {
    /// A control change on a mapped channel/controller: `parameterIndex` is the parameter's
    /// position in `ParameterModel.all`, `value` 0…127.
    case mapped(parameterIndex: Int, value: Int)
    /// The first control change after `MIDIControlInput.armLearn()`, mapped or not; `channel` 1…16.
    case learn(channel: Int, controller: Int)
    /// A program change: `program` 0…127 as sent on the wire, `channel` 1…16.
    case programChange(channel: Int, program: Int)
}

/// The real-time half of MIDI control: a 16×128 table saying which parameter each
/// channel/controller pair drives, a learn flag, and a single-producer single-consumer ring of
/// events from the audio thread to the control side.
///
/// - Control → audio: one `Atomic<UInt16>` per channel/controller (0 = unmapped, else the
///   parameter index + 1). A mapping is one word, so a plain atomic store publishes it; no
///   batch needs to land in one cycle.
/// - Audio → control: `ringCapacity` event words (see `MIDIEventWord`), written only by the
///   audio thread (head), read only by the control side (tail). A full ring drops the event and
///   counts it (`dropped`): a fader box sends well under 1000 messages a second, and the
///   control side drains the ring every `MIDIControlInput.pollInterval` while a source is
///   connected to the port (`waitForSource`), and not at all while none is.
///
/// This struct holds only pointers: copying it never retains, so the JACK process state can
/// hold a copy. The memory is owned by `MIDIControlInput`, which outlives every JACK client.
public struct RealtimeMIDIControl: @unchecked Sendable {
    public static let channelCount = 16
    public static let controllerCount = 128
    /// Events the ring holds (a power of two).
    public static let ringCapacity = 1024

    let table: UnsafeMutablePointer<Atomic<UInt16>>
    let ring: UnsafeMutablePointer<Atomic<UInt32>>
    /// [0] head: events written (audio thread), [1] tail: events read (control side),
    /// [2] events dropped on a full ring, [3] learn armed (1) or not (0).
    let counters: UnsafeMutablePointer<Atomic<UInt64>>

    /// Handles one MIDI message of a JACK MIDI buffer: a control change is looked up in the
    /// table (or taken for learning), a program change is passed on; anything else is ignored.
    /// Real-time safe: atomic loads and stores on preallocated memory, wait-free.
    @inline(__always)
    public func receive(status: UInt8, data1: UInt8, data2: UInt8) {
        let kind = status & 0xF0
        let channel = UInt32(status & 0x0F)
        if kind == 0xB0 {
            let controller = UInt32(data1 & 0x7F)
            // The first control change after arming is the learnt one; the exchange takes it once.
            if counters[3].load(ordering: .relaxed) != 0, counters[3].exchange(0, ordering: .acquiringAndReleasing) != 0 {
                push(MIDIEventWord.learn(channel: channel, controller: controller))
                return
            }
            let slot = table[Int(channel) * Self.controllerCount + Int(controller)].load(ordering: .acquiring)
            if slot != 0 {
                push(MIDIEventWord.mapped(parameterIndex: UInt32(slot) - 1, value: UInt32(data2 & 0x7F)))
            }
        } else if kind == 0xC0 {
            push(MIDIEventWord.programChange(channel: channel, program: UInt32(data1 & 0x7F)))
        }
    }

    @inline(__always)
    func push(_ word: UInt32) {
        let head = counters[0].load(ordering: .relaxed)
        let tail = counters[1].load(ordering: .acquiring)
        guard head &- tail < UInt64(Self.ringCapacity) else {
            counters[2].add(1, ordering: .relaxed)
            return
        }
        ring[Int(head & UInt64(Self.ringCapacity - 1))].store(word, ordering: .relaxed)
        counters[0].store(head &+ 1, ordering: .releasing)
    }
}

/// The 32-bit event words of the ring: bits 30–31 the kind (1 mapped, 2 learn, 3 program
/// change); mapped: bits 0–6 the value, 7–18 the parameter index; learn and program change:
/// bits 0–6 the controller or program, 7–10 the wire channel (0…15).
enum MIDIEventWord {
    @inline(__always) static func mapped(parameterIndex: UInt32, value: UInt32) -> UInt32 {
        1 << 30 | (parameterIndex & 0xFFF) << 7 | value
    }

    @inline(__always) static func learn(channel: UInt32, controller: UInt32) -> UInt32 {
        2 << 30 | channel << 7 | controller
    }

    @inline(__always) static func programChange(channel: UInt32, program: UInt32) -> UInt32 {
        3 << 30 | channel << 7 | program
    }

    static func decode(_ word: UInt32) -> MIDIControlEvent? {
        let low = Int(word & 0x7F), middle = Int((word >> 7) & 0xFFF)
        switch word >> 30 {
        case 1: return .mapped(parameterIndex: middle, value: low)
        case 2: return .learn(channel: (middle & 0xF) + 1, controller: low)
        case 3: return .programChange(channel: (middle & 0xF) + 1, program: low)
        default: return nil
        }
    }
}

/// Owner of the MIDI control memory: the table the control side writes mappings into, the
/// learn flag, and the consumer end of the event ring.
///
/// Thread rules: `setTable`, `armLearn`, `disarmLearn` and `takeEvents` from non-real-time
/// threads; `takeEvents` from one thread at a time (the ring's single consumer). The audio
/// thread uses `realtime`.
public final class MIDIControlInput: Sendable {
    public let realtime: RealtimeMIDIControl
    /// How often the control side drains the ring: each drain coalesces a fast fader into one
    /// request per parameter.
    public static let pollInterval: Duration = .milliseconds(5)
    private let consumer = Mutex<Void>(())
    /// Whether a port feeds the MIDI input (set by the JACK host's notification thread), and the
    /// drains waiting for one.
    private let source = Mutex(SourceState())

    private struct SourceState {
        var connected = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    public init() {
        let cells = RealtimeMIDIControl.channelCount * RealtimeMIDIControl.controllerCount
        let table = UnsafeMutablePointer<Atomic<UInt16>>.allocate(capacity: cells)
        for index in 0..<cells { (table + index).initialize(to: Atomic(0)) }
        let ring = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: RealtimeMIDIControl.ringCapacity)
        for index in 0..<RealtimeMIDIControl.ringCapacity { (ring + index).initialize(to: Atomic(0)) }
        let counters = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 4)
        for index in 0..<4 { (counters + index).initialize(to: Atomic(0)) }
        realtime = RealtimeMIDIControl(table: table, ring: ring, counters: counters)
    }

    deinit {
        realtime.table.deinitialize(count: RealtimeMIDIControl.channelCount * RealtimeMIDIControl.controllerCount)
        realtime.table.deallocate()
        realtime.ring.deinitialize(count: RealtimeMIDIControl.ringCapacity)
        realtime.ring.deallocate()
        realtime.counters.deinitialize(count: 4)
        realtime.counters.deallocate()
    }

    /// Publishes the table: `parameterIndex` for every (channel 1…16, controller 0…127) listed,
    /// unmapped for every other pair. Each word is stored atomically; the audio thread sees each
    /// pair either before or after.
    public func setTable(_ entries: [(channel: Int, controller: Int, parameterIndex: Int)]) {
        var words = [UInt16](repeating: 0, count: RealtimeMIDIControl.channelCount * RealtimeMIDIControl.controllerCount)
        for entry in entries {
            words[(entry.channel - 1) * RealtimeMIDIControl.controllerCount + entry.controller] = UInt16(entry.parameterIndex + 1)
        }
        for (index, word) in words.enumerated() where realtime.table[index].load(ordering: .relaxed) != word {
            realtime.table[index].store(word, ordering: .releasing)
        }
    }

    /// The next control change becomes a `.learn` event (once).
    public func armLearn() { realtime.counters[3].store(1, ordering: .releasing) }

    /// No control change is taken for learning any more.
    public func disarmLearn() { realtime.counters[3].store(0, ordering: .releasing) }

    /// Every event the audio thread wrote since the last call, oldest first.
    public func takeEvents() -> [MIDIControlEvent] {
        consumer.withLock { _ in
            let head = realtime.counters[0].load(ordering: .acquiring)
            var tail = realtime.counters[1].load(ordering: .relaxed)
            var events: [MIDIControlEvent] = []
            while tail != head {
                if let event = MIDIEventWord.decode(realtime.ring[Int(tail & UInt64(RealtimeMIDIControl.ringCapacity - 1))]
                    .load(ordering: .relaxed)) {
                    events.append(event)
                }
                tail &+= 1
            }
            realtime.counters[1].store(tail, ordering: .releasing)
            return events
        }
    }

    /// Records whether any port is connected to the MIDI input; a connection wakes the drains
    /// waiting in `waitForSource`. Any thread.
    public func setSourceConnected(_ connected: Bool) {
        let woken = source.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.connected = connected
            guard connected else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Whether a port is connected to the MIDI input now.
    public var isSourceConnected: Bool { source.withLock { $0.connected } }

    /// Returns once a port is connected to the MIDI input (at once if one is), or when the
    /// waiting task is cancelled.
    public func waitForSource() async {
        let id = source.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = source.withLock { state -> Bool in
                    if state.connected || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            source.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Events dropped because the ring was full.
    public var droppedEvents: UInt64 { realtime.counters[2].load(ordering: .relaxed) }
}
