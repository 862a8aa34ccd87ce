import SoundFitModel
import Synchronization

/// Changes that take effect at a moment (an OSC bundle with a future timetag): a fixed pool of
/// `capacity` records, each one batch of slot words (sequence and value bits, numbered by the
/// mailbox's one sequence counter) and the `EngineTime` it is for. The audio thread looks at
/// every record once per cycle and applies a batch at the frame of the cycle that contains its
/// moment.
///
/// A record's state word is its ticket (how often it was used) shifted left by two, with the
/// state in the low bits: free, ready (waiting for its moment), taken (the audio thread is
/// applying it). The control side fills a free record under the mailbox's writer lock and
/// publishes it with a releasing store of `ready`; it may cancel it (ready → free) with a
/// compare-and-exchange on the whole word, so a cancellation never hits a later use of the record.
/// The audio thread takes a due record (ready → taken), reads it, then frees it. Nothing here
/// grows: a full pool refuses new batches (`EngineError.scheduleFull`).
///
/// This struct holds only pointers (copying it never retains); `EngineMailbox` owns the memory.
public struct ScheduledChanges: @unchecked Sendable {
    /// Batches that can wait for their moment at once.
    public static let capacity = 64

    static let free: UInt64 = 0
    static let ready: UInt64 = 1
    static let taken: UInt64 = 2

    let states: UnsafeMutablePointer<Atomic<UInt64>>
    /// Batches added so far (control side, after the record is ready): the audio thread scans
    /// the records only while this differs from its count at the last scan that found none
    /// ready, so with nothing scheduled a cycle touches one word instead of `capacity`.
    let added: UnsafeMutablePointer<Atomic<UInt64>>
    /// Written before the record's releasing `ready` store; read after the acquiring take.
    let times: UnsafeMutablePointer<UInt64>
    let counts: UnsafeMutablePointer<Int>
    /// `parameterCount` entries per record: slot index and slot word.
    let entryIndices: UnsafeMutablePointer<Int>
    let entryWords: UnsafeMutablePointer<UInt64>
    let parameterCount: Int

    static func allocate(parameterCount: Int) -> ScheduledChanges {
        let states = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: capacity)
        for record in 0..<capacity { (states + record).initialize(to: Atomic(free)) }
        let added = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        added.initialize(to: Atomic(0))
        let times = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        counts.initialize(repeating: 0, count: capacity)
        let entryIndices = UnsafeMutablePointer<Int>.allocate(capacity: capacity * parameterCount)
        entryIndices.initialize(repeating: 0, count: capacity * parameterCount)
        let entryWords = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity * parameterCount)
        entryWords.initialize(repeating: 0, count: capacity * parameterCount)
        return ScheduledChanges(states: states, added: added, times: times, counts: counts, entryIndices: entryIndices,
                                entryWords: entryWords, parameterCount: parameterCount)
    }

    func deallocate() {
        states.deinitialize(count: Self.capacity)
        states.deallocate()
        added.deinitialize(count: 1)
        added.deallocate()
        times.deallocate()
        counts.deallocate()
        entryIndices.deallocate()
        entryWords.deallocate()
    }

    // MARK: Control side (under the mailbox's writer lock)

    /// Records `entries` (slot index and word, at most one per slot) for `time` in a free
    /// record and publishes it; nil when every record is in use.
    func add(_ entries: [(index: Int, word: UInt64)], at time: EngineTime) -> ScheduledTicket? {
        precondition(entries.count <= parameterCount, "one entry per slot at most")
        for record in 0..<Self.capacity {
            let state = states[record].load(ordering: .acquiring)
            guard state & 3 == Self.free else { continue }
            let ticket = (state >> 2) &+ 1
            times[record] = time.microseconds
            counts[record] = entries.count
            for (position, entry) in entries.enumerated() {
                entryIndices[record * parameterCount + position] = entry.index
                entryWords[record * parameterCount + position] = entry.word
            }
            states[record].store(ticket << 2 | Self.ready, ordering: .releasing)
            added.pointee.add(1, ordering: .releasing)
            return ScheduledTicket(record: record, ticket: ticket)
        }
        return nil
    }

    /// Takes `ticket`'s batch back if the audio thread has not taken it yet. Returns whether it
    /// did (false: the batch was applied, or is being applied, or was cancelled before).
    @discardableResult
    func cancel(_ ticket: ScheduledTicket) -> Bool {
        states[ticket.record].compareExchange(
            expected: ticket.ticket << 2 | Self.ready, desired: ticket.ticket << 2 | Self.free,
            ordering: .acquiringAndReleasing).exchanged
    }

    /// Records not in use now.
    var freeCount: Int {
        (0..<Self.capacity).count(where: { states[$0].load(ordering: .relaxed) & 3 == Self.free })
    }

    // MARK: Audio thread

    /// Whether a record may be ready: a batch was added since `settled`, the count of added
    /// batches at the last `collectDue` that found no record ready. Real-time safe: one load.
    @inline(__always)
    func mayHaveReady(settled: UInt64) -> Bool {
        added.pointee.load(ordering: .acquiring) != settled
    }

    /// Writes the records that are ready and whose moment is before `end` (microseconds) into
    /// `due`, earliest first, and returns how many. `settled` is the caller's count for
    /// `mayHaveReady(settled:)`, updated when no record is ready (a batch added during the scan
    /// keeps the count different, so it is seen next cycle). Real-time safe: `capacity` atomic
    /// loads.
    @inline(__always)
    func collectDue(before end: UInt64, into due: UnsafeMutablePointer<Int>, settled: inout UInt64) -> Int {
        let addedBeforeScan = added.pointee.load(ordering: .acquiring)
        var count = 0
        var ready = 0
        for record in 0..<Self.capacity where states[record].load(ordering: .acquiring) & 3 == Self.ready {
            ready &+= 1
            let time = times[record]
            guard time < end else { continue }
            // Insertion sort: a handful of due records per cycle at most.
            var position = count
            while position > 0 && times[due[position &- 1]] > time {
                due[position] = due[position &- 1]
                position &-= 1
            }
            due[position] = record
            count &+= 1
        }
        if ready == 0 { settled = addedBeforeScan }
        return count
    }

    /// Takes a due record for applying (ready → taken); false when the control side cancelled it
    /// meanwhile. Real-time safe.
    @inline(__always)
    func take(_ record: Int) -> Bool {
        let state = states[record].load(ordering: .acquiring)
        guard state & 3 == Self.ready else { return false }
        return states[record].compareExchange(expected: state, desired: state & ~3 | Self.taken,
                                               ordering: .acquiringAndReleasing).exchanged
    }

    /// Frees a record the audio thread took and applied. Real-time safe.
    @inline(__always)
    func release(_ record: Int) {
        let state = states[record].load(ordering: .relaxed)
        states[record].store(state & ~3 | Self.free, ordering: .releasing)
    }
}

/// One scheduled batch in `ScheduledChanges`, to cancel it.
public struct ScheduledTicket: Sendable, Equatable {
    let record: Int
    let ticket: UInt64
}

/// The span of one audio cycle on the engine clock: its first frame is at `start`, the next
/// cycle's first frame at `end` (JACK: `jack_get_cycle_times`). A plain value, real-time safe.
public struct CycleTime: Sendable, Equatable {
    public var start: EngineTime
    public var end: EngineTime

    public init(start: EngineTime, end: EngineTime) {
        self.start = start
        self.end = end
    }

    /// A span from JACK's microsecond times (`jack_get_cycle_times`).
    public init(startMicroseconds: UInt64, endMicroseconds: UInt64) {
        self.init(start: EngineTime(microseconds: startMicroseconds), end: EngineTime(microseconds: endMicroseconds))
    }

    /// The frame of a `frameCount`-frame cycle at which `time` falls, rounded to the nearest
    /// frame (0 for a moment before the cycle; `frameCount` or more: the next cycle's).
    /// Real-time safe.
    @inline(__always)
    public func frame(of time: EngineTime, frameCount: Int) -> Int {
        guard time.microseconds > start.microseconds, end.microseconds > start.microseconds else { return 0 }
        let span = end.microseconds &- start.microseconds
        let elapsed = time.microseconds &- start.microseconds
        return Int((elapsed &* UInt64(frameCount) &+ span / 2) / span)
    }
}
