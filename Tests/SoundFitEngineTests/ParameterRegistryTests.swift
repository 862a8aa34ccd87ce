import Foundation
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import Testing

@Suite struct ParameterRegistryTests {
    @Test func addressesAreUniqueAndFollowTheContract() {
        let addresses = EngineSlot.allCases.map(\.descriptor.address)
        #expect(Set(addresses).count == addresses.count)
        // The OSC contract (v1) names these; they must never be renamed.
        for address in ["/filter/enabled", "/filter/type", "/filter/cutoff", "/filter/q", "/filter/gain",
                        "/ringmod/enabled", "/ringmod/frequency", "/ringmod/mix", "/output/gain"] {
            #expect(EngineSlot(address: address) != nil, "missing \(address)")
        }
        #expect(EngineSlot(address: "/filter/nope") == nil)
    }

    @Test func defaultsMatchTheContract() {
        #expect(EngineSlot.filterEnabled.descriptor.defaultValue == .bool(false))
        #expect(EngineSlot.filterType.descriptor.defaultValue == .choice("lowpass"))
        #expect(EngineSlot.filterCutoff.descriptor.defaultValue == .float(1000))
        #expect(EngineSlot.filterQ.descriptor.defaultValue == .float(0.7071))
        #expect(EngineSlot.filterGain.descriptor.defaultValue == .float(0))
        #expect(EngineSlot.ringModulatorEnabled.descriptor.defaultValue == .bool(false))
        #expect(EngineSlot.ringModulatorFrequency.descriptor.defaultValue == .float(22))
        #expect(EngineSlot.ringModulatorMix.descriptor.defaultValue == .float(1))
        #expect(EngineSlot.outputGain.descriptor.defaultValue == .float(0))
    }

    @Test(arguments: EngineSlot.allCases)
    func encodingRoundTripsEveryDefaultAndBoundary(_ parameter: EngineSlot) throws {
        let descriptor = parameter.descriptor
        var values = [descriptor.defaultValue]
        switch descriptor.kind {
        case .bool: values += [.bool(true), .bool(false)]
        case .float(let range): values += [.float(range.lowerBound), .float(range.upperBound)]
        case .int(let range): values += [.int(range.lowerBound), .int(range.upperBound)]
        case .choice(let names): values += names.map { .choice($0) }
        }
        for value in values {
            try descriptor.validate(value)
            #expect(parameter.decode(parameter.encode(value)) == value)
            var settings = ChainSettings()
            parameter.store(parameter.encode(value), into: &settings)
            #expect(parameter.load(from: settings) == parameter.encode(value))
        }
    }

    @Test func validationRejectsWithoutClamping() {
        let cutoff = EngineSlot.filterCutoff.descriptor
        #expect(throws: ParameterError.outOfRange(address: "/filter/cutoff", value: "5.0", range: "20.0…20000.0")) {
            try cutoff.validate(.float(5))
        }
        #expect(throws: ParameterError.notFinite(address: "/filter/cutoff")) { try cutoff.validate(.float(.nan)) }
        #expect(throws: ParameterError.wrongType(address: "/filter/cutoff", expected: "float")) {
            try cutoff.validate(.choice("loud"))
        }
        #expect(throws: ParameterError.self) {
            try EngineSlot.filterType.descriptor.validate(.choice("bogus"))
        }
        #expect(throws: ParameterError.self) {
            try EngineSlot.outputGain.descriptor.validate(.float(12.5))
        }
    }

}
