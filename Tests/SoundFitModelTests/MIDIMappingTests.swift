import SoundFitModel
import Testing

@Suite struct MIDIMappingTests {
    @Test func aControlValueCoversTheWholeRangeThroughTheFaderTaper() {
        let gain = ParameterModel.outputGain
        #expect(MIDIMapping.value(of: gain, controlValue: 0) == .float(-60))
        #expect(MIDIMapping.value(of: gain, controlValue: 127) == .float(12))
        #expect(MIDIMapping.value(of: gain, controlValue: 64) == .float(Float(-60 + 64.0 / 127 * 72)))
        let cutoff = ParameterModel.filterCutoff
        #expect(MIDIMapping.value(of: cutoff, controlValue: 0) == .float(20))
        #expect(MIDIMapping.value(of: cutoff, controlValue: 127) == .float(20000))
    }

    @Test func togglesTurnOnFrom64AndChoicesTakeTheNearestStep() {
        let enabled = ParameterModel.filterEnabled
        #expect(MIDIMapping.value(of: enabled, controlValue: 63) == .bool(false))
        #expect(MIDIMapping.value(of: enabled, controlValue: 64) == .bool(true))
        let type = ParameterModel.filterType
        guard case .choice(let names) = type.kind else { Issue.record("not a choice"); return }
        #expect(MIDIMapping.value(of: type, controlValue: 0) == .choice(names[0]))
        #expect(MIDIMapping.value(of: type, controlValue: 127) == .choice(names[names.count - 1]))
    }

    @Test func mappingsNameAWritableParameterAChannel1To16AndAController0To127() throws {
        let mapping = try MIDIMapping(address: "/output/gain", channel: 16, controller: 127)
        #expect(mapping.parameterIndex == ParameterModel.all.firstIndex(of: ParameterModel.outputGain))
        #expect(throws: ParameterError.unknownAddress("/nope")) { try MIDIMapping(address: "/nope", channel: 1, controller: 7) }
        #expect(throws: ParameterError.readOnly(address: "/processing/fitting")) {
            try MIDIMapping(address: "/processing/fitting", channel: 1, controller: 7)
        }
        for (channel, controller) in [(0, 7), (17, 7), (1, 128), (1, -1)] {
            #expect(throws: ParameterError.self) { try MIDIMapping(address: "/output/gain", channel: channel, controller: controller) }
        }
    }
}
