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

    /// Every session name has one entry, and the application order lists every writable one
    /// once, the preset before the enable that needs it.
    @Test func sessionNamesAreTheSessionEntriesAndTheApplicationOrderCoversTheWritableOnes() {
        #expect(SessionParameter.Name.allCases.map { ParameterModel.entry(for: $0) } == ParameterModel.session)
        let order = SessionParameter.Name.applicationOrder
        #expect(Set(order) == Set(SessionParameter.Name.allCases.filter(\.isWritable)))
        #expect(order.count == Set(order).count)
        #expect(order.firstIndex(of: .preset)! < order.firstIndex(of: .isEnabled)!)
        #expect(ParameterModel.entry(for: .techLevel).address == "/processing/fitting")
    }

    @Test func theAddressSpaceIsTheSessionsThenTheKernels() {
        #expect(ParameterModel.all.prefix(5).allSatisfy { $0.binding?.isSession == true })
        #expect(ParameterModel.all.dropFirst(5).allSatisfy { $0.binding?.engineSlot != nil })
        #expect(ParameterModel.writable.allSatisfy { $0.access == .readWrite })
        #expect(!ParameterModel.writable.contains(ParameterModel.processingFitting))
    }

    @Test func techLevelsOutsideTheRangeAreRefused() {
        #expect(throws: TechLevelError.invalidTechLevel(5)) { try TechLevel(5) }
        #expect("\(TechLevelError.invalidTechLevel(0))" == "tech level 0 is outside 1…4")
        #expect(PresetVariant.allCases.map(\.rawValue) + [PresetVariant.noneName]
            == ["default", "up", "down", "none"])
    }
}

@Suite struct RequestOriginTests {
    private struct Peer: Hashable, Sendable {
        var host: String
        var port: UInt16
    }

    @Test func aSurfaceReadsItsOwnSenderBack() {
        let origin = RequestOrigin(Peer(host: "127.0.0.1", port: 9000))
        #expect(origin.sender(as: Peer.self) == Peer(host: "127.0.0.1", port: 9000))
        #expect(origin.sender(as: String.self) == nil)
    }

    @Test func originsAreEqualOnlyForEqualSendersOfOneType() {
        #expect(RequestOrigin(Peer(host: "a", port: 1)) == RequestOrigin(Peer(host: "a", port: 1)))
        #expect(RequestOrigin(Peer(host: "a", port: 1)) != RequestOrigin(Peer(host: "a", port: 2)))
        #expect(RequestOrigin("1") != RequestOrigin(1))
        #expect(Set([RequestOrigin("x"), RequestOrigin("x"), RequestOrigin("y")]).count == 2)
    }
}
