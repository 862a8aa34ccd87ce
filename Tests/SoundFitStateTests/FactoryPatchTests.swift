import Foundation
import SoundFitJSON
import SoundFitModel
import SoundFitState
import Testing

@Suite struct FactoryPatchTests {
    private func load() -> (patches: [Patch], problems: [DocumentProblem]) {
        FactoryPatchLibrary.load(directory: factoryPatchDirectory, descriptors: TestParameters.descriptors)
    }

    private func patch(_ number: Int) throws -> Patch {
        try #require(load().patches.first { $0.number == number })
    }

    @Test func everyFactoryPatchLoadsAndSetsEveryWritableParameter() throws {
        let (patches, problems) = load()
        #expect(problems.isEmpty, "\(problems)")
        #expect(patches.map(\.number) == [0, 1, 2, 3, 4])
        #expect(patches.map(\.name) == ["Transparent", "Speech clarity", "Lowpass 1 kHz", "Ring modulator 22 Hz", "Telephone band"])
        for patch in patches {
            #expect(Set(patch.parameters.keys) == Set(TestParameters.writableAddresses), "\(patch.name)")
            #expect(patch.parameters["/processing/can_enable"] == nil)
            #expect(!patch.summary.isEmpty)
            #expect(patch.isFactory)
        }
    }

    @Test func factoryFilesAreWrittenAsSoundFitWritesPatches() throws {
        // Decoding and encoding again gives the same bytes: the files are in canonical form, so a
        // diff of a re-saved patch shows only real changes.
        let files = try FileManager.default.contentsOfDirectory(atPath: factoryPatchDirectory.path).filter { $0.hasSuffix(".json") }
        #expect(files.count == 5)
        for file in files {
            let data = try Data(contentsOf: factoryPatchDirectory.appendingPathComponent(file))
            let patch = try Patch.decode(data, file: file, descriptors: TestParameters.descriptors, completeness: .required)
            #expect(String(decoding: patch.encoded(descriptors: TestParameters.descriptors), as: UTF8.self) == String(decoding: data, as: UTF8.self), "\(file)")
        }
    }

    @Test func transparentIsTheDefaultState() throws {
        let transparent = try patch(0)
        #expect(transparent.parameters == TestParameters.defaults)
        #expect(transparent.parameters["/processing/enabled"] == .bool(false))
        #expect(transparent.parameters["/filter/enabled"] == .bool(false))
        #expect(transparent.parameters["/ringmod/enabled"] == .bool(false))
        #expect(transparent.parameters["/output/gain"] == .float(0))
        #expect(!transparent.needsHearingProfile)
    }

    @Test func speechClarityUsesTheRecommendedPersonalization() throws {
        let speech = try patch(1)
        #expect(speech.parameters["/processing/enabled"] == .bool(true))
        #expect(speech.parameters["/processing/intensity"] == .float(0.75))
        #expect(speech.parameters["/processing/preset"] == .choice("default"))
        #expect(speech.parameters["/filter/enabled"] == .bool(false))
        #expect(speech.parameters["/ringmod/enabled"] == .bool(false))
        #expect(speech.needsHearingProfile)
        #expect(speech.personalizationPresetVariant == "default")
    }

    @Test func lowpassIsTheBiquadDemosDefault() throws {
        let lowpass = try patch(2)
        #expect(lowpass.parameters["/filter/enabled"] == .bool(true))
        #expect(lowpass.parameters["/filter/type"] == .choice("lowpass"))
        #expect(lowpass.parameters["/filter/cutoff"] == .float(1000))
        #expect(lowpass.parameters["/filter/q"] == .float(0.7071))
        #expect(lowpass.parameters["/processing/enabled"] == .bool(false))
        #expect(lowpass.parameters["/ringmod/enabled"] == .bool(false))
    }

    @Test func ringModulatorIsTheRobotVoice() throws {
        let robot = try patch(3)
        #expect(robot.parameters["/ringmod/enabled"] == .bool(true))
        #expect(robot.parameters["/ringmod/frequency"] == .float(22))
        #expect(robot.parameters["/ringmod/mix"] == .float(1))
        #expect(robot.parameters["/filter/enabled"] == .bool(false))
    }

    @Test func telephoneBandIsABandpassFrom300To3400Hz() throws {
        let telephone = try patch(4)
        #expect(telephone.parameters["/filter/enabled"] == .bool(true))
        #expect(telephone.parameters["/filter/type"] == .choice("bandpass"))
        guard case .float(let centre)? = telephone.parameters["/filter/cutoff"],
              case .float(let q)? = telephone.parameters["/filter/q"] else {
            Issue.record("cutoff and q must be floats")
            return
        }
        // Geometric centre of the band, and Q = centre / bandwidth (the -3 dB points of the RBJ
        // constant-peak bandpass, computed in the analog prototype).
        #expect(abs(Double(centre) - (300.0 * 3400.0).squareRoot()) < 5)
        #expect(abs(Double(centre) / Double(q) - 3100) < 10)
        let lower = Double(centre) * ((1 + 4 * Double(q * q)).squareRoot() - 1) / (2 * Double(q))
        let upper = lower + Double(centre) / Double(q)
        #expect(abs(lower - 300) < 5)
        #expect(abs(upper - 3400) < 15)
    }

    @Test func loadingOrderEnablesPersonalizationLastAndDisablesItFirst() throws {
        let speech = try patch(1).loadingOrder(descriptors: TestParameters.descriptors).map(\.address)
        #expect(speech.count == TestParameters.writableAddresses.count)
        #expect(speech.suffix(3) == ["/processing/preset", "/processing/intensity", "/processing/enabled"])
        let lowpass = try patch(2).loadingOrder(descriptors: TestParameters.descriptors).map(\.address)
        #expect(lowpass.first == "/processing/enabled")
        #expect(lowpass.suffix(2) == ["/processing/preset", "/processing/intensity"])
        #expect(Set(lowpass) == Set(TestParameters.writableAddresses))
    }

    /// A `true` enable is a step of its own, after the preset's (it needs the preset
    /// applied); a `false` one stays first in the only step.
    @Test func loadingStepsPutATrueEnableInASecondStep() throws {
        let speech = Patch.loadingSteps(of: try patch(1).parameters, descriptors: TestParameters.descriptors)
        #expect(speech.map(\.count) == [TestParameters.writableAddresses.count - 1, 1])
        #expect(speech.last?.first?.address == "/processing/enabled" && speech.last?.first?.value == .bool(true))
        #expect(speech.first?.contains { $0.address == "/processing/enabled" } == false)
        let lowpass = Patch.loadingSteps(of: try patch(2).parameters, descriptors: TestParameters.descriptors)
        #expect(lowpass.count == 1)
        #expect(lowpass.first?.first?.address == "/processing/enabled")
        #expect(Patch.loadingSteps(of: [:], descriptors: TestParameters.descriptors).isEmpty)
    }
}
