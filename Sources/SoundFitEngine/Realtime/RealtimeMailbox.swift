import SoundFitModel
import Synchronization

/// The lock-free meeting point between the control side and the audio thread.
///
/// - Control → audio: one latest-value slot per `EngineSlot` (an `Atomic<UInt64>` packing
///   a 32-bit sequence number and the 32-bit value). Bursts coalesce; the audio thread reads
///   every slot once per cycle. A generation counter (a seqlock) lets the control side publish
///   several slots as one batch, so changes that belong together take effect in a single cycle.
/// - Control → audio, at a moment: `ScheduledChanges`, batches of slot words numbered by the
///   same sequence counter, applied at the frame of the cycle that contains their moment.
/// - Audio → control: one acknowledgement word per parameter packing the sequence number that
///   took effect last and the cycle index in which it did; per parameter a history of the last
///   `historyDepth` pickups (the same words) guarded by a write counter, so the control side can
///   tell exactly which of several published sequences the audio thread took and which it never
///   saw (several values of one parameter may be in flight); plus a cycle counter.
///
/// This struct holds only pointers: copying it never retains, so the audio thread can hold a
/// copy. The memory is owned by `EngineMailbox`, which outlives every renderer.
public struct RealtimeMailbox: @unchecked Sendable {
    @usableFromInline let slots: UnsafeMutablePointer<Atomic<UInt64>>
    @usableFromInline let acknowledgements: UnsafeMutablePointer<Atomic<UInt64>>
    /// `historyDepth` pickup words per parameter, a ring indexed by pickup count.
    @usableFromInline let history: UnsafeMutablePointer<Atomic<UInt64>>
    /// Per parameter: twice the pickups recorded in `history`, plus one while the audio thread
    /// writes an entry (odd = writing). Readers compare it before and after reading the ring.
    @usableFromInline let historyWrites: UnsafeMutablePointer<Atomic<UInt64>>
    /// Odd while the control side is writing a batch.
    @usableFromInline let generation: UnsafeMutablePointer<Atomic<UInt64>>
    /// Cycles rendered since the engine started (all renderers together).
    @usableFromInline let cycles: UnsafeMutablePointer<Atomic<UInt64>>
    /// The sample rate the current renderer runs at (Double bits; 0 before the first renderer).
    let sampleRate: UnsafeMutablePointer<Atomic<UInt64>>
    /// The output safety limit's ceilings (Float bits, linear peak; infinity = none): the left
    /// ear's, the right ear's, and the hearing test's (its tones may go up to the maximum output,
    /// above an ear's derived maximum). Set by the control side, read by the audio thread every cycle.
    let outputCeiling: UnsafeMutablePointer<Atomic<UInt32>>
    /// The smallest output-limit gain (Float bits) since the control side last took it.
    let outputLimitReduction: UnsafeMutablePointer<Atomic<UInt32>>
    /// Preset hand-over for the personalization stage.
    let personalization: PersonalizationMailbox
    /// Batches waiting for their moment (OSC bundles with a future timetag).
    let scheduled: ScheduledChanges
    /// Per parameter, the word (sequence and value bits) in effect on the audio thread, from a
    /// slot or a scheduled batch: a new renderer (after a JACK restart) starts from the newer of
    /// it and the slot, so a scheduled value already applied is not undone.
    let appliedWords: UnsafeMutablePointer<Atomic<UInt64>>
    /// The hearing test's test mode and tone commands.
    let stimulus: StimulusMailbox
    /// The live meters (levels, band gains and gain reduction) while someone listens.
    let meters: MeterMailbox
    public let parameterCount: Int

    /// A slot word: sequence number in the high half, value bits in the low half.
    @inline(__always) static func pack(_ high: UInt32, _ low: UInt32) -> UInt64 {
        UInt64(high) << 32 | UInt64(low)
    }

    @inline(__always) static func high(_ word: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: word >> 32) }
    @inline(__always) static func low(_ word: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: word) }

    /// Copies every slot into `destination` if no batch was being written meanwhile.
    /// Returns false when the read raced a batch; the caller retries next cycle.
    /// Real-time safe: wait-free, no allocation.
    @inline(__always)
    func snapshot(into destination: UnsafeMutablePointer<UInt64>) -> Bool {
        snapshot(into: destination, newerThan: Self.noGeneration) != nil
    }

    /// Like `snapshot(into:)`, but only when a batch was published since generation `seen` (the
    /// value this returned last): every slot write is a batch, so an unchanged generation means
    /// nothing is new and the slots are not read at all (the audio thread's common case: no
    /// cache line of the slots is touched). Returns the generation copied at; nil when nothing
    /// is new or the read raced a batch (retried next cycle).
    /// Real-time safe: wait-free, no allocation.
    @inline(__always)
    func snapshot(into destination: UnsafeMutablePointer<UInt64>, newerThan seen: UInt64) -> UInt64? {
        let before = generation.pointee.load(ordering: .acquiring)
        if before & 1 == 1 || before == seen { return nil }
        for index in 0..<parameterCount {
            destination[index] = slots[index].load(ordering: .acquiring)
        }
        return generation.pointee.load(ordering: .acquiring) == before ? before : nil
    }

    /// A generation no snapshot has (generations of finished batches are even).
    static let noGeneration = UInt64.max

    /// Pickups remembered per parameter. Eight cover a watcher that falls seven cycles behind
    /// (about 9 ms at 64 frames, 37 ms at 256); an older target is resolved by the fallback
    /// described at `EngineMailbox.acknowledgement(of:index:)`.
    public static let historyDepth = 8

    /// Records that `sequence` of parameter `index` took effect in cycle `cycle`: appends it to
    /// the parameter's history, then updates the acknowledgement word (so a reader that sees a
    /// word also finds it in the history). Audio thread only (the single writer of both).
    /// Real-time safe: three atomic stores and a load, wait-free.
    @inline(__always)
    func acknowledge(index: Int, sequence: UInt32, cycle: UInt64) {
        let word = Self.pack(sequence, UInt32(truncatingIfNeeded: cycle))
        let writes = historyWrites[index].load(ordering: .relaxed)
        // Odd while writing. The releasing store of the entry orders this store before it: a
        // reader that sees the new entry also sees the counter move.
        historyWrites[index].store(writes &+ 1, ordering: .relaxed)
        let position = Int((writes >> 1) % UInt64(Self.historyDepth))
        history[index * Self.historyDepth + position].store(word, ordering: .releasing)
        historyWrites[index].store(writes &+ 2, ordering: .releasing)
        acknowledgements[index].store(word, ordering: .releasing)
    }

    /// Counts one rendered cycle and returns its index. Real-time safe.
    @inline(__always)
    func beginCycle() -> UInt64 {
        cycles.pointee.add(1, ordering: .relaxed).oldValue
    }
}

/// Owner of the mailbox memory and the single producer of parameter values.
///
/// Thread rules: `publish` may be called from any non-real-time thread (calls are serialized
/// internally); the read accessors may be called from any thread.
public final class EngineMailbox: Sendable {
    public let realtime: RealtimeMailbox
    /// Serializes producers: the seqlock needs a single writer at a time.
    private let writer = Mutex<UInt32>(0)

    /// Creates the mailbox with every slot holding its initial word (sequence 0: nothing to
    /// acknowledge) and the personalization stage at `techLevel`.
    public init(initialWords: [UInt32], techLevel: Int = 3) {
        let count = initialWords.count
        let slots = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        let acknowledgements = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        let history = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count * RealtimeMailbox.historyDepth)
        let historyWrites = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        for index in 0..<count {
            (slots + index).initialize(to: Atomic(RealtimeMailbox.pack(0, initialWords[index])))
            (acknowledgements + index).initialize(to: Atomic(0))
            (historyWrites + index).initialize(to: Atomic(0))
        }
        for position in 0..<count * RealtimeMailbox.historyDepth {
            (history + position).initialize(to: Atomic(0))
        }
        let generation = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        generation.initialize(to: Atomic(0))
        let cycles = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        cycles.initialize(to: Atomic(0))
        let sampleRate = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        sampleRate.initialize(to: Atomic(0))
        // Left ear, right ear, hearing test.
        let outputCeiling = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 3)
        for index in 0..<3 { (outputCeiling + index).initialize(to: Atomic(Float.infinity.bitPattern)) }
        let appliedWords = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        for index in 0..<count {
            (appliedWords + index).initialize(to: Atomic(RealtimeMailbox.pack(0, initialWords[index])))
        }
        let outputLimitReduction = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 1)
        outputLimitReduction.initialize(to: Atomic(Float(1).bitPattern))
        realtime = RealtimeMailbox(
            slots: slots, acknowledgements: acknowledgements, history: history, historyWrites: historyWrites,
            generation: generation, cycles: cycles,
            sampleRate: sampleRate, outputCeiling: outputCeiling, outputLimitReduction: outputLimitReduction,
            personalization: .allocate(techLevel: techLevel), scheduled: .allocate(parameterCount: count),
            appliedWords: appliedWords, stimulus: .allocate(), meters: .allocate(), parameterCount: count)
    }

    deinit {
        realtime.slots.deinitialize(count: realtime.parameterCount)
        realtime.slots.deallocate()
        realtime.acknowledgements.deinitialize(count: realtime.parameterCount)
        realtime.acknowledgements.deallocate()
        realtime.history.deinitialize(count: realtime.parameterCount * RealtimeMailbox.historyDepth)
        realtime.history.deallocate()
        realtime.historyWrites.deinitialize(count: realtime.parameterCount)
        realtime.historyWrites.deallocate()
        realtime.generation.deinitialize(count: 1)
        realtime.generation.deallocate()
        realtime.cycles.deinitialize(count: 1)
        realtime.cycles.deallocate()
        realtime.sampleRate.deallocate()
        realtime.outputCeiling.deallocate()
        realtime.outputLimitReduction.deallocate()
        let personalization = realtime.personalization
        personalization.releaseRetired()
        PersonalizationMailbox.unmanaged(personalization.takeNext())?.release()
        personalization.deallocate()
        realtime.scheduled.deallocate()
        realtime.appliedWords.deinitialize(count: realtime.parameterCount)
        realtime.appliedWords.deallocate()
        realtime.meters.deallocate()
        realtime.stimulus.deallocate()
    }

    /// Publishes new values as one batch: the audio thread sees all of them in the same cycle.
    /// Returns the sequence number given to each change, in order.
    @discardableResult
    public func publish(_ changes: [(index: Int, bits: UInt32)]) -> [UInt32] {
        publish(changes.map { (index: $0.index, bits: $0.bits, expected: nil) }).map { $0! }
    }

    /// Publishes each change only where its slot still holds the sequence `expected` (nothing
    /// newer was published there since), the others as one batch. Returns the new sequence of
    /// each change, nil where the slot had moved on. This is how a failed value is taken back
    /// without undoing a newer value published after it.
    @discardableResult
    public func publish(_ changes: [(index: Int, bits: UInt32, expected: UInt32?)]) -> [UInt32?] {
        writer.withLock { lastSequence in
            realtime.generation.pointee.add(1, ordering: .acquiringAndReleasing)
            var sequences: [UInt32?] = []
            sequences.reserveCapacity(changes.count)
            for change in changes {
                if let expected = change.expected,
                   RealtimeMailbox.high(realtime.slots[change.index].load(ordering: .relaxed)) != expected {
                    sequences.append(nil)
                    continue
                }
                lastSequence &+= 1
                if lastSequence == 0 { lastSequence = 1 }
                realtime.slots[change.index].store(
                    RealtimeMailbox.pack(lastSequence, change.bits), ordering: .releasing)
                sequences.append(lastSequence)
            }
            realtime.generation.pointee.add(1, ordering: .releasing)
            return sequences
        }
    }

    /// Schedules new values as one batch for `time`: the audio thread applies all of them at the
    /// frame of the cycle that contains it (or at the start of its next cycle when the moment is
    /// already past). Each change gets a sequence number like a published one (returned in
    /// order); of several changes of one slot only the last is scheduled, the others are
    /// superseded by it. Nil when `ScheduledChanges.capacity` batches are already waiting.
    public func schedule(_ changes: [(index: Int, bits: UInt32)], at time: EngineTime)
        -> (sequences: [UInt32], ticket: ScheduledTicket)?
    {
        writer.withLock { lastSequence in
            guard realtime.scheduled.freeCount > 0 else { return nil }
            var sequences: [UInt32] = []
            sequences.reserveCapacity(changes.count)
            var entries: [(index: Int, word: UInt64)] = []
            for change in changes {
                lastSequence &+= 1
                if lastSequence == 0 { lastSequence = 1 }
                sequences.append(lastSequence)
                entries.removeAll { $0.index == change.index }
                entries.append((index: change.index, word: RealtimeMailbox.pack(lastSequence, change.bits)))
            }
            guard let ticket = realtime.scheduled.add(entries, at: time) else { return nil }
            return (sequences, ticket)
        }
    }

    /// Takes a scheduled batch back unless the audio thread took it already; returns whether it did.
    @discardableResult
    public func cancel(_ ticket: ScheduledTicket) -> Bool {
        realtime.scheduled.cancel(ticket)
    }

    /// Whether a batch can be scheduled now (fewer than `ScheduledChanges.capacity` wait).
    public var canSchedule: Bool { realtime.scheduled.freeCount > 0 }

    /// The latest published word (value bits) of slot `index`.
    public func publishedBits(index: Int) -> UInt32 {
        RealtimeMailbox.low(realtime.slots[index].load(ordering: .acquiring))
    }

    /// The sequence number last published to slot `index`.
    public func publishedSequence(index: Int) -> UInt32 {
        RealtimeMailbox.high(realtime.slots[index].load(ordering: .acquiring))
    }

    /// The sequence number that last took effect for slot `index`, and the cycle (low 32 bits).
    public func acknowledgement(index: Int) -> (sequence: UInt32, cycle: UInt32) {
        let word = realtime.acknowledgements[index].load(ordering: .acquiring)
        return (RealtimeMailbox.high(word), RealtimeMailbox.low(word))
    }

    /// What the audio thread did with `sequence` of slot `index`, as far as it has told.
    ///
    /// Exact while the parameter's pickup history (`RealtimeMailbox.historyDepth` entries)
    /// reaches back to `sequence`: found in it → `applied` in that cycle; a newer sequence was
    /// picked up, and the history holds an older one or never wrapped → `superseded` (the audio
    /// thread never takes a sequence older than one it took, from a slot or a scheduled batch, so
    /// it can no longer be picked up). When the history wrapped past
    /// `sequence` (the caller looked too late: more than `historyDepth` pickups since), the
    /// answer is `beyondHistory` with the cycle of the oldest remembered pickup.
    /// Control side, any thread; lock-free (a read that races the audio thread's write is retried
    /// a few times, then reported `waiting` to be asked again).
    public func acknowledgement(of sequence: UInt32, index: Int) -> SequenceAcknowledgement {
        // Fast path: the newest pickup word.
        let latest = acknowledgement(index: index)
        if latest.sequence == sequence { return .applied(cycle: latest.cycle) }
        if Int32(bitPattern: latest.sequence &- sequence) < 0 { return .waiting }
        let depth = UInt64(RealtimeMailbox.historyDepth)
        let ring = realtime.history + index * RealtimeMailbox.historyDepth
        let writes = realtime.historyWrites + index
        for _ in 0..<4 {
            let before = writes.pointee.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let pickups = before >> 1
            var found: UInt32?
            var oldestNewerCycle: UInt32?
            var holdsOlder = false
            for position in (pickups - min(pickups, depth))..<pickups {
                let word = ring[Int(position % depth)].load(ordering: .acquiring)
                let distance = Int32(bitPattern: RealtimeMailbox.high(word) &- sequence)
                if distance == 0 {
                    found = found ?? RealtimeMailbox.low(word)
                } else if distance > 0 {
                    oldestNewerCycle = oldestNewerCycle ?? RealtimeMailbox.low(word)
                } else {
                    holdsOlder = true
                }
            }
            guard writes.pointee.load(ordering: .acquiring) == before else { continue }  // torn: read again
            if let found { return .applied(cycle: found) }
            guard let oldestNewerCycle else { return .waiting }
            if holdsOlder || pickups <= depth { return .superseded }
            return .beyondHistory(cycle: oldestNewerCycle)
        }
        return .waiting
    }

    /// Cycles rendered so far.
    public var cycleCount: UInt64 { realtime.cycles.pointee.load(ordering: .relaxed) }
}

/// What became of one published sequence of a slot (`EngineMailbox.acknowledgement(of:index:)`).
public enum SequenceAcknowledgement: Equatable, Sendable {
    /// Not picked up yet, and nothing newer was either.
    case waiting
    /// Picked up in this cycle (low 32 bits): the audio thread rendered it from then on.
    case applied(cycle: UInt32)
    /// A newer sequence of the slot was picked up and this one never was: the audio thread
    /// never rendered it.
    case superseded
    /// A newer sequence was picked up (this is the cycle of the oldest one still remembered), and
    /// the history no longer reaches back far enough to tell whether this one was picked up
    /// before it.
    case beyondHistory(cycle: UInt32)
}
