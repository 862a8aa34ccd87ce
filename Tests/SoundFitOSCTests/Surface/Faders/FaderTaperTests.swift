import Foundation
import OSCCore
import SoundFitModel
import SoundFitEngine
import SoundFitOSC
import Testing

@Suite struct FaderTaperTests {
    let cutoff = EngineSlot.filterCutoff.descriptor
    let filterGain = EngineSlot.filterGain.descriptor
    let outputGain = EngineSlot.outputGain.descriptor
    let q = EngineSlot.filterQ.descriptor
    let filterType = EngineSlot.filterType.descriptor
    let filterEnabled = EngineSlot.filterEnabled.descriptor
    /// Like `/processing/fitting`.
    let techLevel = ParameterDescriptor(address: "/processing/fitting", kind: .int(1...4), defaultValue: .int(3),
                                        access: .readOnly, summary: "Tech level.")

    private func float(_ position: Float, _ descriptor: ParameterDescriptor) throws -> Float {
        guard case .float(let value) = try FaderTaper.value(normalized: position, for: descriptor) else {
            Issue.record("not a float")
            return .nan
        }
        return value
    }

    @Test func theTaperFollowsTheUnitAndKind() {
        #expect(FaderTaper(cutoff) == .logarithmic(20...20000))
        #expect(FaderTaper(EngineSlot.ringModulatorFrequency.descriptor) == .logarithmic(15...40))
        #expect(FaderTaper(filterGain) == .decibel(-24...24))
        #expect(FaderTaper(outputGain) == .decibel(-60...12))
        #expect(FaderTaper(q) == .linear(0.1...18))
        #expect(FaderTaper(EngineSlot.ringModulatorMix.descriptor) == .linear(0...1))
        #expect(FaderTaper(filterEnabled) == .toggle)
        #expect(FaderTaper(filterType) == .steps(["lowpass", "highpass", "bandpass", "notch", "peak",
                                                  "lowshelf", "highshelf", "allpass"]))
        #expect(FaderTaper(techLevel) == .integer(1...4))
        // A frequency range that reaches 0 Hz cannot be logarithmic.
        let zeroBased = ParameterDescriptor(address: "/x", kind: .float(0...100), defaultValue: .float(0),
                                            unit: "Hz", summary: "")
        #expect(FaderTaper(zeroBased) == .linear(0...100))
    }

    @Test func frequenciesAreLogarithmic() throws {
        #expect(try float(0, cutoff) == 20)
        #expect(try float(1, cutoff) == 20000)
        #expect(abs(try float(0.5, cutoff) - 632.4555) < 0.001)  // √(20·20000)
        #expect(abs(try float(2.0 / 3.0, cutoff) - 2000) < 0.01)  // two of three decades
        #expect(FaderTaper.normalized(.float(20), for: cutoff) == 0)
        #expect(FaderTaper.normalized(.float(20000), for: cutoff) == 1)
        #expect(abs(FaderTaper.normalized(.float(632.4555), for: cutoff) - 0.5) < 1e-6)
        #expect(abs(FaderTaper.normalized(.float(200), for: cutoff) - 1.0 / 3.0) < 1e-6)
    }

    @Test func gainsAreLinearInDecibels() throws {
        #expect(try float(0, filterGain) == -24)
        #expect(try float(0.5, filterGain) == 0)
        #expect(try float(0.25, filterGain) == -12)
        #expect(try float(1, filterGain) == 24)
        #expect(try float(0.5, outputGain) == -24)
        #expect(abs(FaderTaper.normalized(.float(0), for: outputGain) - 60.0 / 72.0) < 1e-6)
        #expect(FaderTaper.normalized(.float(-60), for: outputGain) == 0)
    }

    @Test func otherFloatsAreLinear() throws {
        #expect(try float(0, q) == 0.1)
        #expect(abs(try float(0.5, q) - 9.05) < 1e-5)
        #expect(try float(1, q) == 18)
        #expect(abs(FaderTaper.normalized(.float(0.7071), for: q) - (0.7071 - 0.1) / 17.9) < 1e-6)
    }

    @Test func intsAreLinearAndRounded() throws {
        #expect(try FaderTaper.value(normalized: 0, for: techLevel) == .int(1))
        #expect(try FaderTaper.value(normalized: 0.49, for: techLevel) == .int(2))  // 2.47
        #expect(try FaderTaper.value(normalized: 0.5, for: techLevel) == .int(3))   // 2.5 rounds up
        #expect(try FaderTaper.value(normalized: 1, for: techLevel) == .int(4))
        #expect(FaderTaper.normalized(.int(2), for: techLevel) == Float(1.0 / 3.0))
        #expect(FaderTaper.normalized(.int(4), for: techLevel) == 1)
    }

    @Test func boolsSwitchAtOneHalf() throws {
        #expect(try FaderTaper.value(normalized: 0.49, for: filterEnabled) == .bool(false))
        #expect(try FaderTaper.value(normalized: 0.5, for: filterEnabled) == .bool(true))
        #expect(try FaderTaper.value(normalized: 1, for: filterEnabled) == .bool(true))
        #expect(FaderTaper.normalized(.bool(true), for: filterEnabled) == 1)
        #expect(FaderTaper.normalized(.bool(false), for: filterEnabled) == 0)
    }

    @Test func choicesAreEvenlySpacedAndTheNearestWins() throws {
        #expect(FaderTaper.normalized(.choice("lowpass"), for: filterType) == 0)
        #expect(FaderTaper.normalized(.choice("highpass"), for: filterType) == Float(1.0 / 7.0))
        #expect(FaderTaper.normalized(.choice("allpass"), for: filterType) == 1)
        #expect(try FaderTaper.value(normalized: 0.07, for: filterType) == .choice("lowpass"))    // 0.49
        #expect(try FaderTaper.value(normalized: 0.08, for: filterType) == .choice("highpass"))   // 0.56
        #expect(try FaderTaper.value(normalized: 0.5, for: filterType) == .choice("peak"))        // 3.5 rounds up
        #expect(try FaderTaper.value(normalized: 1, for: filterType) == .choice("allpass"))
        let single = ParameterDescriptor(address: "/one", kind: .choice(["only"]), defaultValue: .choice("only"), summary: "")
        #expect(FaderTaper.normalized(.choice("only"), for: single) == 0)
        #expect(try FaderTaper.value(normalized: 0.9, for: single) == .choice("only"))
    }

    @Test func positionsOutsideZeroToOneAreRejectedNotClamped() {
        #expect(throws: ParameterError.outOfRange(address: "/filter/cutoff/normalized", value: "1.01", range: "0…1")) {
            try FaderTaper.value(normalized: 1.01, for: cutoff)
        }
        #expect(throws: ParameterError.outOfRange(address: "/filter/type/normalized", value: "-0.5", range: "0…1")) {
            try FaderTaper.value(normalized: -0.5, for: filterType)
        }
        for position in [Float.nan, .infinity, -.infinity] {
            #expect(throws: ParameterError.notFinite(address: "/output/gain/normalized")) {
                try FaderTaper.value(normalized: position, for: outputGain)
            }
        }
        #expect(ParameterError.outOfRange(address: "/filter/cutoff/normalized", value: "1.01", range: "0…1").description
                == "/filter/cutoff/normalized: 1.01 is out of range 0…1")
    }

    @Test func oscArgumentsOfANormalizedSet() throws {
        #expect(try FaderTaper.value(from: .float(1), for: cutoff) == .float(20000))
        #expect(try FaderTaper.value(from: .double(0), for: cutoff) == .float(20))
        #expect(try FaderTaper.value(from: .int32(1), for: filterEnabled) == .bool(true))
        #expect(try FaderTaper.value(from: .int64(0), for: filterEnabled) == .bool(false))
        #expect(try FaderTaper.value(from: .bool(true), for: filterGain) == .float(24))
        #expect(throws: ParameterError.wrongType(address: "/filter/cutoff/normalized", expected: "float 0…1")) {
            try FaderTaper.value(from: .string("half"), for: cutoff)
        }
        #expect(throws: ParameterError.outOfRange(address: "/filter/q/normalized", value: "2.0", range: "0…1")) {
            try FaderTaper.value(from: .int32(2), for: q)
        }
    }

    @Test func addressForm() {
        #expect(cutoff.normalizedAddress == "/filter/cutoff/normalized")
        #expect(FaderTaper.parameterAddress(forNormalized: "/filter/cutoff/normalized") == "/filter/cutoff")
        #expect(FaderTaper.parameterAddress(forNormalized: "/filter/cutoff") == nil)
        #expect(FaderTaper.parameterAddress(forNormalized: "/normalized") == nil)
        #expect(FaderTaper.parameterAddress(forNormalized: "normalized") == nil)
        #expect(FaderTaper.message(.float(20000), for: cutoff) == OSCMessage("/filter/cutoff/normalized", [.float(1)]))
        #expect(FaderTaper.message(.choice("notch"), for: filterType)
                == OSCMessage("/filter/type/normalized", [.float(Float(3.0 / 7.0))]))
        // No parameter address can be mistaken for a fader address.
        for parameter in EngineSlot.allCases {
            #expect(FaderTaper.parameterAddress(forNormalized: parameter.descriptor.address) == nil)
        }
    }

    @Test(arguments: EngineSlot.allCases)
    func positionsRoundTripThroughNativeValues(_ parameter: EngineSlot) throws {
        let descriptor = parameter.descriptor
        let taper = FaderTaper(descriptor)
        for position: Float in [0, 0.25, 0.5, 0.75, 1] {
            let value = try FaderTaper.value(normalized: position, for: descriptor)
            try descriptor.validate(value)  // always in range, with the parameter's kind
            let back = taper.normalized(value)
            switch descriptor.kind {
            case .float: #expect(abs(back - position) < 1e-5, "\(descriptor.address) at \(position): \(value) → \(back)")
            case .bool: #expect(back == (position >= 0.5 ? 1 : 0))
            default: #expect(try FaderTaper.value(normalized: back, for: descriptor) == value)
            }
        }
        // Native → position → native keeps the default.
        let position = taper.normalized(descriptor.defaultValue)
        let value = try taper.value(normalized: position, address: descriptor.normalizedAddress)
        switch (value, descriptor.defaultValue) {
        case (.float(let a), .float(let b)):
            // The position is a Float: its rounding, scaled by the range, bounds the error.
            guard case .float(let range) = descriptor.kind else { return }
            #expect(abs(a - b) <= (range.upperBound - range.lowerBound) * 1e-7 + abs(b) * 1e-6, "\(a) vs \(b)")
        default: #expect(value == descriptor.defaultValue)
        }
    }
}
