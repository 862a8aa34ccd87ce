import SoundFitModel
import Testing

/// The value a parameter's requests took and what its change feed carried.
@Suite struct CommittedValueTests {
    @Test func onlyANewerRequestsValueIsTakenAndTheFeedCarriesEachChangeOnce() {
        var committed = CommittedValue(10)
        let newer = committed.take(30, requestID: 3)
        let older = committed.take(20, requestID: 2)  // an older request that ended late
        #expect(newer && !older)
        #expect(committed.value == 30 && committed.requestID == 3)
        let stale = committed.announcement(for: 2)  // not the value in effect
        let announced = committed.announcement(for: 3)
        let again = committed.announcement(for: 3)  // carried already
        #expect(stale == nil && announced == 30 && again == nil)
    }

    @Test func aValueThatCameBackBeforeItWasAnnouncedIsNoChange() {
        var committed = CommittedValue(10)
        committed.take(20, requestID: 1)
        committed.take(10, requestID: 2)  // back before the journal had 20
        let none = committed.announcement(for: 2)
        committed.take(40, requestID: 3)
        let forty = committed.announcement(for: 3)
        let changed = committed.take(40, requestID: 4)  // the same value: taken, no change
        let unchanged = committed.announcement(for: 4)
        #expect(none == nil && forty == 40)
        #expect(!changed && committed.requestID == 4 && unchanged == nil)
    }
}
