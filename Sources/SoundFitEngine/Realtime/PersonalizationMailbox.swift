import SoundFitDSP
import Synchronization

/// Hands prepared personalization presets to the audio thread and takes retired ones back,
/// without the audio thread ever retaining, releasing or allocating.
///
/// - Control → audio: one slot holding the next preset as a word: a 16-bit generation in the
///   high bits and the `Unmanaged<PreparedPersonalization>` pointer in the low 48 bits (pointer
///   0 = remove the preset). The audio thread takes the word with an exchange, so ownership of
///   the pointer passes exactly once; the control side takes back a word the audio thread never
///   took (a newer preset replaced it, or a timeout).
/// - Audio → control: the generation installed (or rejected) last, and a single-producer ring of
///   retired pointers that the control side releases.
/// - The tech level the chain's personalization stage should have (the session's).
///
/// Plain pointers only: copies never retain. Memory is owned by `EngineMailbox`.
public struct PersonalizationMailbox: @unchecked Sendable {
    static let pointerMask: UInt64 = (1 << 48) - 1
    static let retiredCapacity = 64

    let next: UnsafeMutablePointer<Atomic<UInt64>>
    /// Generation of the last installed (or removed) preset, and of the last rejected one.
    let installedGeneration: UnsafeMutablePointer<Atomic<UInt64>>
    let rejectedGeneration: UnsafeMutablePointer<Atomic<UInt64>>
    let techLevel: UnsafeMutablePointer<Atomic<Int>>
    /// Retired pointers: the audio thread writes at `retiredTail`, the control side reads at `retiredHead`.
    let retired: UnsafeMutablePointer<UInt64>
    let retiredHead: UnsafeMutablePointer<Atomic<Int>>
    let retiredTail: UnsafeMutablePointer<Atomic<Int>>

    static func allocate(techLevel: Int) -> PersonalizationMailbox {
        func atomic<T: AtomicRepresentable>(_ value: T) -> UnsafeMutablePointer<Atomic<T>> {
            let pointer = UnsafeMutablePointer<Atomic<T>>.allocate(capacity: 1)
            pointer.initialize(to: Atomic(value))
            return pointer
        }
        let retired = UnsafeMutablePointer<UInt64>.allocate(capacity: retiredCapacity)
        retired.initialize(repeating: 0, count: retiredCapacity)
        return PersonalizationMailbox(
            next: atomic(UInt64(0)), installedGeneration: atomic(UInt64(0)), rejectedGeneration: atomic(UInt64(0)),
            techLevel: atomic(techLevel), retired: retired, retiredHead: atomic(0), retiredTail: atomic(0))
    }

    func deallocate() {
        next.deallocate()
        installedGeneration.deallocate()
        rejectedGeneration.deallocate()
        techLevel.deallocate()
        retired.deallocate()
        retiredHead.deallocate()
        retiredTail.deallocate()
    }

    // MARK: Audio thread

    /// Hands a retired preset back to the control side. Returns false when the ring is full
    /// (the caller keeps it and retries next cycle). Real-time safe.
    @inline(__always)
    func retire(_ prepared: Unmanaged<PreparedPersonalization>) -> Bool {
        let tail = retiredTail.pointee.load(ordering: .relaxed)
        guard tail - retiredHead.pointee.load(ordering: .acquiring) < Self.retiredCapacity else { return false }
        retired[tail % Self.retiredCapacity] = UInt64(UInt(bitPattern: prepared.toOpaque()))
        retiredTail.pointee.store(tail + 1, ordering: .releasing)
        return true
    }

    /// Takes the next preset word, if any. Real-time safe.
    @inline(__always)
    func takeNext() -> UInt64 {
        // A plain load first: the exchange (a locked read-modify-write) only when there is
        // something to take, which is rare; every other cycle only reads the word.
        guard next.pointee.load(ordering: .relaxed) != 0 else { return 0 }
        return next.pointee.exchange(0, ordering: .acquiringAndReleasing)
    }

    // MARK: Control side

    /// Releases every retired preset. Control thread (one at a time).
    func releaseRetired() {
        let tail = retiredTail.pointee.load(ordering: .acquiring)
        var head = retiredHead.pointee.load(ordering: .relaxed)
        while head < tail {
            Self.unmanaged(retired[head % Self.retiredCapacity])?.release()
            head += 1
        }
        retiredHead.pointee.store(head, ordering: .releasing)
    }

    static func unmanaged(_ bits: UInt64) -> Unmanaged<PreparedPersonalization>? {
        let address = UInt(bits & pointerMask)
        guard address != 0, let raw = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
        return Unmanaged.fromOpaque(raw)
    }
}
