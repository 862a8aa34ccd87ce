import CAllocationCounter
import CRealtimeSupport

/// The totals of the allocation counter (`CAllocationCounter`) at one moment: heap calls inside
/// realtime sections, realtime sections entered, and heap calls outside them. A test reads them
/// before a run and asks `untilNow()` for what the run added.
struct AllocationCounts {
    var realtimeHeapCalls: UInt64
    var sectionsEntered: UInt64
    var otherHeapCalls: UInt64

    /// The totals now.
    static func now() -> AllocationCounts {
        AllocationCounts(realtimeHeapCalls: soundfit_realtime_heap_calls(),
                         sectionsEntered: soundfit_realtime_sections_entered(),
                         otherHeapCalls: soundfit_other_heap_calls())
    }

    /// What was counted from this reading to now.
    func untilNow() -> AllocationCounts {
        let now = Self.now()
        return AllocationCounts(realtimeHeapCalls: now.realtimeHeapCalls - realtimeHeapCalls,
                                sectionsEntered: now.sectionsEntered - sectionsEntered,
                                otherHeapCalls: now.otherHeapCalls - otherHeapCalls)
    }
}

extension InProcessRealtimeRig {
    /// Ends a counted run: closes the test's audio client and stops SoundFit, so nothing more
    /// runs on the JACK thread, then returns what the allocation counter counted since `before`.
    func stopAndCount(since before: AllocationCounts) -> AllocationCounts {
        audio.close()
        soundfit.stop()
        return before.untilNow()
    }
}
