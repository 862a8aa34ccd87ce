import Foundation
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState
import SoundFitTestSupport
import Testing

/// Adding a parameter is one model entry plus its DSP: these tests fail until every consumer of
/// the model covers every entry.
@Suite struct ParameterModelCoverageTests {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyEntryIsBoundAndEveryBindingHasOneEntry() {
        let addresses = ParameterModel.all.map(\.address)
        #expect(Set(addresses).count == addresses.count)
        #expect(ParameterModel.all.allSatisfy { $0.binding != nil })
        for slot in EngineSlot.allCases where slot != .personalizationEnabled && slot != .personalizationIntensity {
            #expect(ParameterModel.all.filter { $0.binding == .engine(slot) }.count == 1, "slot \(slot) has no entry")
        }
        for parameter in SessionParameter.Name.allCases {
            #expect(ParameterModel.all.filter { $0.binding == .session(parameter) }.count == 1, "\(parameter) has no entry")
        }
        #expect(ParameterModel.kernels.allSatisfy { $0.binding?.engineSlot != nil })
        #expect(ParameterModel.session.allSatisfy { $0.binding?.isSession == true })
        #expect(ParameterModel.all.allSatisfy { ParameterModel.entry(at: $0.address) == $0 })
    }

    /// The engine maps every slot onto the chain settings, and the DSP's defaults are the model's.
    @Test(arguments: EngineSlot.allCases)
    func theEngineMapsEverySlot(_ slot: EngineSlot) throws {
        let entry = slot.descriptor
        try entry.validate(entry.defaultValue)
        #expect(slot.decode(slot.load(from: ChainSettings())) == entry.defaultValue, "DSP default of \(entry.address)")
        var values = [entry.defaultValue]
        switch entry.kind {
        case .bool: values += [.bool(true), .bool(false)]
        case .float(let range): values += [.float(range.lowerBound), .float(range.upperBound)]
        case .int(let range): values += [.int(range.lowerBound), .int(range.upperBound)]
        case .choice(let names): values += names.map { .choice($0) }
        }
        for value in values {
            var settings = ChainSettings()
            slot.store(slot.encode(value), into: &settings)
            #expect(slot.decode(slot.load(from: settings)) == value)
        }
    }

    /// The runtime (OSC dispatch and `/list`) serves every entry, with the entry itself.
    @Test func theRuntimeServesEveryEntry() throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        #expect(runtime.parameters.map(\.descriptor) == ParameterModel.all)
        for entry in ParameterModel.all {
            #expect(runtime.parameter(at: entry.address)?.descriptor == entry, "\(entry.address) is not dispatched")
        }
    }

    /// Every session entry's surface control follows from the entry: a writable bool or number
    /// is the session's parameter of that type and name (a set reaches it), a read-only one shows
    /// the session's reading.
    @Test func everySessionEntryHasItsControlFromTheEntry() async throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let session = try #require(runtime.controller.session)
        for name in SessionParameter.Name.allCases {
            let entry = ParameterModel.entry(for: name)
            let control = try #require(runtime.parameter(at: entry.address), "\(entry.address)")
            let shown = try control.currentValue()
            switch (name.isWritable, entry.kind) {
            case (true, .bool):
                let parameter = try #require(session.parameter(name, as: Bool.self), "\(name) is not a Bool parameter")
                #expect(shown == .bool(parameter.value), "\(entry.address)")
            case (true, .float(let range)):
                let parameter = try #require(session.parameter(name, as: Float.self), "\(name) is not a Float parameter")
                #expect(shown == .float(parameter.value), "\(entry.address)")
                let request = try control.request(.float(range.upperBound), origin: nil)
                var last: ParameterUpdateState<ParameterValue>?
                for await state in request.states { last = state }
                #expect(last?.name == .applied, "\(entry.address): \(String(describing: last))")
                #expect(parameter.value == range.upperBound, "\(entry.address): the set did not reach the session's parameter")
            case (true, _):
                #expect(name == .preset, "\(entry.address): a writable \(entry.kind.typeName) needs its control named in SessionControl")
            case (false, _):
                if let readable = SessionParameter.Readable(name) {
                    #expect(shown == session.expectedReading(readable).parameterValue, "\(entry.address)")
                } else {
                    Issue.record("\(entry.address): a read-only session parameter the handler is not read for")
                }
            }
        }
    }

    /// State files and patches carry every writable entry and read it back.
    @Test func stateAndPatchCodingCoverEveryWritableEntry() throws {
        let document = StateDocument.defaults(descriptors: ParameterModel.all, session: .fineTuning(techLevel: try TechLevel(3)))
        let decoded = try StateDocument.decode(document.encoded(descriptors: ParameterModel.all), file: "state.json",
                                               descriptors: ParameterModel.all)
        let patch = Patch(number: -1, name: "all", parameters: document.parameters)
        let patchText = String(decoding: patch.encoded(descriptors: ParameterModel.all), as: UTF8.self)
        for entry in ParameterModel.writable {
            #expect(decoded.parameters[entry.address] == entry.defaultValue, "state file misses \(entry.address)")
            #expect(patchText.contains("\"\(entry.address)\""), "patch file misses \(entry.address)")
        }
        #expect(patch.loadingOrder(descriptors: ParameterModel.writable).count == ParameterModel.writable.count)
    }

    /// The generated tables (docs/osc-guide.md, docs/OSC.md, `soundfit parameters`) list every entry.
    @Test func theDocumentationListsEveryEntry() throws {
        let table = ParameterTable.markdown(ParameterModel.all)
        let guide = try String(contentsOf: Self.repository.appendingPathComponent("docs/osc-guide.md"), encoding: .utf8)
        let osc = try String(contentsOf: Self.repository.appendingPathComponent("docs/OSC.md"), encoding: .utf8)
        #expect(guide.contains(table))
        #expect(osc.contains(table))
        for entry in ParameterModel.all {
            #expect(table.contains("| `\(entry.address)` |"), "\(entry.address) is missing from the table")
        }
    }

    /// Every entry has a fader taper that maps its default onto 0…1 and back to a valid value.
    @Test func everyEntryHasAFaderTaper() throws {
        for entry in ParameterModel.all {
            #expect(entry.taper == FaderTaper(kind: entry.kind, unit: entry.unit), "\(entry.address)")
            let position = entry.taper.normalized(entry.defaultValue)
            #expect((0...1).contains(position))
            try entry.validate(entry.taper.value(normalized: position, address: entry.address))
        }
    }
}
