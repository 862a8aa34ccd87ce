import SoundFitModel
import Testing

@Suite struct ParameterModelTests {
    @Test func entriesAreFoundByAddressSlotAndSessionParameter() {
        #expect(ParameterModel.entry(at: "/filter/cutoff") == ParameterModel.filterCutoff)
        #expect(ParameterModel.entry(at: "/filter/nope") == nil)
        #expect(EngineSlot(address: "/filter/cutoff") == .filterCutoff)
        #expect(EngineSlot(address: "/processing/enabled") == nil)
        #expect(EngineSlot.filterCutoff.descriptor == ParameterModel.filterCutoff)
        #expect(EngineSlot.personalizationIntensity.descriptor == ParameterModel.processingIntensity)
        #expect(ParameterModel.entry(for: .preset) == ParameterModel.processingPreset)
    }

    @Test func theAddressSpaceIsTheSessionsThenTheKernels() {
        #expect(ParameterModel.all.prefix(5).allSatisfy { $0.binding?.isSession == true })
        #expect(ParameterModel.all.dropFirst(5).allSatisfy { $0.binding?.engineSlot != nil })
        #expect(ParameterModel.writable.allSatisfy { $0.access == .readWrite })
        #expect(!ParameterModel.writable.contains(ParameterModel.processingFitting))
    }

    @Test func fittingsOutsideTheTechLevelsAreRefused() {
        #expect(throws: FittingError.invalidTechLevel(5)) { try Fitting(techLevel: 5) }
        #expect("\(FittingError.invalidTechLevel(0))" == "tech level 0 is outside 1…4")
        #expect(PresetVariant.allCases.map(\.rawValue) + [PresetVariant.noneName]
            == ["default", "up", "down", "none"])
    }
}
