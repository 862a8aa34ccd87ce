import Synchronization

/// The lock-free meeting point between the control side and the audio thread.
///
/// - Control → audio: one latest-value slot per `EngineParameter` (an `Atomic<UInt64>` packing
///   a 32-bit sequence number and the 32-bit value). Bursts coalesce; the audio thread reads
///   every slot once per cycle. A generation counter (a seqlock) lets the control side publish
///   several slots as one batch, so an OSC bundle takes effect in a single cycle.
/// - Audio → control: one acknowledgement word per parameter packing the sequence number that
///   took effect and the cycle index in which it did, plus a cycle counter.
///
/// This struct holds only pointers: copying it never retains, so the audio thread can hold a
/// copy. The memory is owned by `EngineMailbox`, which outlives every renderer.
public struct RealtimeMailbox: @unchecked Sendable {
    @usableFromInline let slots: UnsafeMutablePointer<Atomic<UInt64>>
    @usableFromInline let acknowledgements: UnsafeMutablePointer<Atomic<UInt64>>
    /// Odd while the control side is writing a batch.
    @usableFromInline let generation: UnsafeMutablePointer<Atomic<UInt64>>
    /// Cycles rendered since the engine started (all renderers together).
    @usableFromInline let cycles: UnsafeMutablePointer<Atomic<UInt64>>
    /// The sample rate the current renderer runs at (Double bits; 0 before the first renderer).
    let sampleRate: UnsafeMutablePointer<Atomic<UInt64>>
    /// Preset hand-over for the personalization stage.
    let personalization: PersonalizationMailbox
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
        let before = generation.pointee.load(ordering: .acquiring)
        if before & 1 == 1 { return false }
        for index in 0..<parameterCount {
            destination[index] = slots[index].load(ordering: .acquiring)
        }
        return generation.pointee.load(ordering: .acquiring) == before
    }

    /// Records that `sequence` of parameter `index` took effect in cycle `cycle`.
    /// Real-time safe.
    @inline(__always)
    func acknowledge(index: Int, sequence: UInt32, cycle: UInt64) {
        acknowledgements[index].store(Self.pack(sequence, UInt32(truncatingIfNeeded: cycle)), ordering: .releasing)
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
        for index in 0..<count {
            (slots + index).initialize(to: Atomic(RealtimeMailbox.pack(0, initialWords[index])))
            (acknowledgements + index).initialize(to: Atomic(0))
        }
        let generation = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        generation.initialize(to: Atomic(0))
        let cycles = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        cycles.initialize(to: Atomic(0))
        let sampleRate = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        sampleRate.initialize(to: Atomic(0))
        realtime = RealtimeMailbox(
            slots: slots, acknowledgements: acknowledgements, generation: generation, cycles: cycles,
            sampleRate: sampleRate, personalization: .allocate(techLevel: techLevel), parameterCount: count)
    }

    deinit {
        realtime.slots.deinitialize(count: realtime.parameterCount)
        realtime.slots.deallocate()
        realtime.acknowledgements.deinitialize(count: realtime.parameterCount)
        realtime.acknowledgements.deallocate()
        realtime.generation.deinitialize(count: 1)
        realtime.generation.deallocate()
        realtime.cycles.deinitialize(count: 1)
        realtime.cycles.deallocate()
        realtime.sampleRate.deallocate()
        let personalization = realtime.personalization
        personalization.releaseRetired()
        PersonalizationMailbox.unmanaged(personalization.takeNext())?.release()
        personalization.deallocate()
    }

    /// Publishes new values as one batch: the audio thread sees all of them in the same cycle.
    /// Returns the sequence number given to each change, in order.
    @discardableResult
    public func publish(_ changes: [(index: Int, bits: UInt32)]) -> [UInt32] {
        writer.withLock { lastSequence in
            realtime.generation.pointee.add(1, ordering: .acquiringAndReleasing)
            var sequences: [UInt32] = []
            sequences.reserveCapacity(changes.count)
            for change in changes {
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

    /// Cycles rendered so far.
    public var cycleCount: UInt64 { realtime.cycles.pointee.load(ordering: .relaxed) }
}
