import SoundFitModel
import SoundFitState
import Testing

@Suite struct CurrentPatchTests {
    private let lowpass = Patch(number: 2, name: "Lowpass 1 kHz",
                                parameters: TestParameters.values(["/filter/enabled": .bool(true)]))

    @Test func aLoadedPatchIsCurrentAndUnmodified() {
        var tracker = CurrentPatchTracker()
        #expect(tracker.current == nil)
        tracker.select(lowpass, values: lowpass.parameters)
        #expect(tracker.current == CurrentPatch(number: 2, name: "Lowpass 1 kHz", isModified: false))
    }

    @Test func changingAValueModifiesAndChangingItBackDoesNot() {
        var tracker = CurrentPatchTracker()
        tracker.select(lowpass)
        var values = lowpass.parameters
        values["/filter/cutoff"] = .float(1200)
        var changed = tracker.update(values: values)
        #expect(changed)
        #expect(tracker.current?.isModified == true)
        #expect(tracker.current?.description == "2 'Lowpass 1 kHz' (modified)")
        values["/output/gain"] = .float(-3)
        changed = tracker.update(values: values)
        #expect(!changed, "still modified: no change to report")
        values = lowpass.parameters
        changed = tracker.update(values: values)
        #expect(changed)
        #expect(tracker.current?.isModified == false)
    }

    @Test func singleAppliedValuesAreTracked() {
        var tracker = CurrentPatchTracker()
        var changed = tracker.valueApplied(.float(-3), at: "/output/gain")
        #expect(!changed, "no current patch")
        changed = tracker.select(lowpass)
        #expect(changed)
        #expect(tracker.current?.isModified == false, "loading set every value of the patch")
        changed = tracker.valueApplied(.float(500), at: "/filter/cutoff")
        #expect(changed)
        #expect(tracker.current?.isModified == true)
        changed = tracker.valueApplied(.float(-3), at: "/output/gain")
        #expect(!changed)
        changed = tracker.valueApplied(.float(1000), at: "/filter/cutoff")
        #expect(!changed, "the output gain still differs")
        changed = tracker.valueApplied(.float(0), at: "/output/gain")
        #expect(changed)
        #expect(tracker.current?.isModified == false)
    }

    @Test func aLoadThatCouldNotApplyEverythingIsModified() {
        var tracker = CurrentPatchTracker()
        var applied = lowpass.parameters
        applied["/filter/enabled"] = .bool(false)
        tracker.select(lowpass, values: applied)
        #expect(tracker.current?.isModified == true)
    }

    @Test func deletingTheCurrentPatchForgetsIt() {
        var tracker = CurrentPatchTracker()
        tracker.select(lowpass)
        tracker.forget(number: -1)
        #expect(tracker.current?.number == 2)
        tracker.forget(number: 2)
        #expect(tracker.current == nil)
        let changed = tracker.update(values: TestParameters.defaults)
        #expect(!changed)
    }

    @Test func restoringNeedsThePatchStillThere() {
        var changed = lowpass.parameters
        changed["/filter/q"] = .float(2)
        let saved = CurrentPatch(number: 2, name: "Lowpass 1 kHz", isModified: true)
        let restored = CurrentPatchTracker(restoring: saved, patch: lowpass, values: changed)
        #expect(restored.current == saved)
        let unmodified = CurrentPatchTracker(restoring: saved, patch: lowpass, values: lowpass.parameters)
        #expect(unmodified.current?.isModified == false)
        #expect(CurrentPatchTracker(restoring: saved, patch: nil, values: changed).current == nil)
        let renamed = Patch(number: 2, name: "Other", parameters: lowpass.parameters)
        #expect(CurrentPatchTracker(restoring: saved, patch: renamed, values: changed).current == nil)
    }
}
