import SoundFitTestSupport
import Foundation
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitProcessing
import SoundFitRuntime
import Testing

@Suite struct RuntimeTests {
    private func makeRuntime(timeout: Duration = .seconds(20)) throws -> SoundFitRuntime {
        SoundFitRuntime(
            engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)),
            config: DeliveryConfiguration(deliveryTimeout: timeout))
    }

    private func terminalState(_ request: ParameterRequest<ParameterValue>) async -> ParameterUpdateState<ParameterValue>? {
        var last: ParameterUpdateState<ParameterValue>?
        for await state in request.states { last = state }
        return last
    }

    private func n3Profile() throws -> HearingProfile {
        let levels: [(Double, Double)] = [(250, 35), (500, 35), (1000, 40), (1500, 45), (2000, 50), (3000, 55), (4000, 60), (6000, 65)]
        return try HearingProfile(left: try Audiogram(levels), right: nil)
    }

    @Test func theAddressSpaceHasTheContractsParameters() throws {
        let runtime = try makeRuntime()
        let addresses = runtime.parameters.map(\.descriptor.address)
        #expect(addresses == [
            "/processing/enabled", "/processing/intensity", "/processing/preset", "/processing/can_enable",
            "/processing/fitting", "/filter/enabled", "/filter/type", "/filter/cutoff", "/filter/q", "/filter/gain",
            "/ringmod/enabled", "/ringmod/frequency", "/ringmod/mix", "/output/enabled", "/output/gain",
        ])
    }

    @Test func aKernelChangeIsAppliedOnlyThroughTheAudioThread() async throws {
        let runtime = try makeRuntime()
        let cutoff = try #require(runtime.parameter(at: "/filter/cutoff"))
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let before = runtime.engine.cycleCount
        let state = await terminalState(try cutoff.request(.float(2500), origin: nil))
        #expect(state?.name == .applied)
        #expect(runtime.engine.cycleCount > before)
        #expect(runtime.engine.settings.filter.cutoff == 2500)
        #expect(try cutoff.currentValue() == .float(2500))
    }

    @Test func withoutAudioCyclesAChangeFailsAndTheValueStays() async throws {
        let runtime = try makeRuntime(timeout: .milliseconds(100))
        let gain = try #require(runtime.parameter(at: "/output/gain"))
        let state = await terminalState(try gain.request(.float(-6), origin: nil))
        #expect(state?.name == .failed)
        #expect(state?.reason?.isEmpty == false)
        #expect(try gain.currentValue() == .float(0))
        // The mailbox holds the kept value again: a returning server does not pick up -6 dB.
        #expect(runtime.engine.value(of: .outputGain) == .float(0))
    }

    @Test func kernelValuesStreamIntoTheEngineAndOnlyTheRenderedOnesAreApplied() async throws {
        let runtime = try makeRuntime()
        var driver = InMemoryDriver(engine: runtime.engine, blockSize: 64, channelCount: 1)
        driver.renderSilentCycle()
        let cutoff = try #require(runtime.parameter(at: "/filter/cutoff"))

        let requests = try [500, 600, 700].map { try cutoff.request(.float(Float($0)), origin: nil) }
        // Published at once, in order, none waiting for the one before: the audio thread's
        // next cycle takes the newest.
        #expect(runtime.engine.value(of: .filterCutoff) == .float(700))
        let cycle = UInt32(truncatingIfNeeded: driver.renderSilentCycle())

        let ends = await requests.asyncMap { await terminalState($0)?.name }
        #expect(ends == [.superseded, .superseded, .applied])
        #expect(try cutoff.currentValue() == .float(700))
        #expect(runtime.engine.mailbox.acknowledgement(index: EngineSlot.filterCutoff.rawValue).cycle == cycle)
    }

    @Test func aFailedValueIsTakenBackOnlyWhenNothingNewerWasPublished() async throws {
        let runtime = try makeRuntime(timeout: .milliseconds(100))
        let gain = try #require(runtime.parameter(at: "/output/gain"))
        let older = try gain.request(.float(-6), origin: nil)
        runtime.config = DeliveryConfiguration(deliveryTimeout: .seconds(30))
        let newer = try gain.request(.float(-12), origin: nil)

        // No cycle runs: the older one times out while the newer one is in flight.
        #expect(await terminalState(older)?.name == .failed)
        // Its failure did not put the kept value (0 dB) over the newer -12 dB.
        #expect(runtime.engine.value(of: .outputGain) == .float(-12))
        var driver = InMemoryDriver(engine: runtime.engine, blockSize: 64, channelCount: 1)
        driver.renderSilentCycle()
        #expect(await terminalState(newer)?.name == .applied)
        #expect(try gain.currentValue() == .float(-12))
    }

    @Test func theSessionFollowsTheAudioSystemAndKeepsItsValues() async throws {
        let runtime = try makeRuntime()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let session = try #require(runtime.controller.session)
        #expect(session.techLevel.value == 3)
        let intensity = try #require(runtime.parameter(at: "/processing/intensity"))
        #expect(await terminalState(try intensity.request(.float(0.8), origin: nil))?.name == .applied)
        #expect(runtime.engine.value(of: .personalizationIntensity) == .float(0.8))

        await runtime.audioSystemDisconnected()
        #expect(runtime.controller.session == nil)
        #expect(throws: ControlError.self) { _ = try intensity.currentValue() }
        #expect(throws: ControlError.self) { _ = try intensity.request(.float(0.2), origin: nil) }

        try await runtime.audioSystemConnected()
        #expect(runtime.controller.session != nil)
        #expect(try intensity.currentValue() == .float(0.8))
    }

    @Test func aBatchOfKernelChangesLandsInOneCycle() async throws {
        let runtime = try makeRuntime()
        var driver = InMemoryDriver(engine: runtime.engine, blockSize: 64, channelCount: 1)
        driver.renderSilentCycle()
        let changes: [(any ControlParameter, ParameterValue)] = [
            (try #require(runtime.parameter(at: "/filter/type")), .choice("highpass")),
            (try #require(runtime.parameter(at: "/filter/cutoff")), .float(300)),
            (try #require(runtime.parameter(at: "/filter/q")), .float(2)),
        ]
        let results = runtime.requestBatch(changes, origin: nil)
        // The very next cycle after the call returns has all three values: the batch was
        // published as one before any request was delivered on its own.
        let cycle = UInt32(truncatingIfNeeded: driver.renderSilentCycle())
        for parameter in [EngineSlot.filterType, .filterCutoff, .filterQ] {
            #expect(runtime.engine.mailbox.acknowledgement(index: parameter.rawValue).cycle == cycle)
        }
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        for result in results {
            #expect(await terminalState(try result.get())?.name == .applied)
        }
        #expect(runtime.engine.settings.filter.type == .highpass)
        #expect(runtime.engine.settings.filter.cutoff == 300)
    }

    @Test func presetsComeFromTheHearingProfile() async throws {
        let runtime = try makeRuntime()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let preset = try #require(runtime.parameter(at: "/processing/preset"))
        #expect(throws: ControlError.self) { _ = try preset.request(.choice("default"), origin: nil) }
        #expect(try runtime.parameter(at: "/processing/can_enable")?.currentValue() == .bool(false))

        let variants = try await runtime.submitProfile(try n3Profile())
        #expect(variants == [.default, .up, .down])
        // The recommendation for a submitted profile: default preset, enabled, intensity 0.75.
        #expect(try preset.currentValue() == .choice("default"))
        #expect(try runtime.parameter(at: "/processing/enabled")?.currentValue() == .bool(true))
        #expect(try runtime.parameter(at: "/processing/intensity")?.currentValue() == .float(0.75))
        #expect(try runtime.parameter(at: "/processing/can_enable")?.currentValue() == .bool(true))

        let states = try preset.request(.choice("up"), origin: nil).states
        var names: [UpdateStateName] = []
        for await state in states { names.append(state.name) }
        #expect(names == [.pending, .applying, .applied])
        #expect(try preset.currentValue() == .choice("up"))
    }

    @Test func readOnlyAndInvalidValuesAreRefused() async throws {
        let runtime = try makeRuntime()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        #expect(throws: ParameterError.readOnly(address: "/processing/fitting")) {
            _ = try runtime.parameter(at: "/processing/fitting")?.request(.int(2), origin: nil)
        }
        #expect(throws: ParameterError.self) { _ = try runtime.parameter(at: "/processing/intensity")?.request(.float(1.5), origin: nil) }
        #expect(throws: ParameterError.self) { _ = try runtime.parameter(at: "/filter/cutoff")?.request(.float(5), origin: nil) }
        #expect(try runtime.parameter(at: "/processing/fitting")?.currentValue() == .int(3))
    }
}

@Suite struct ChangeFeedTests {
    @Test func changesCarryTheRequestersOriginAndOthersDoNot() async throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        let publishing = Task { await runtime.run() }
        defer { publishing.cancel() }
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        var changes = runtime.changeUpdates().makeAsyncIterator()
        let gain = try #require(runtime.parameter(at: "/output/gain"))
        let origin = RequestOrigin("client-a")
        var states = try gain.request(.float(-3), origin: origin).states.makeAsyncIterator()
        while let state = await states.next(), !state.isTerminal {}
        let change = await changes.next()
        // (Which request made it is the parameter's bookkeeping; the change is address, value, origin.)
        #expect(change.map { ParameterChange(address: $0.address, value: $0.value, origin: $0.origin) }
            == ParameterChange(address: "/output/gain", value: .float(-3), origin: origin))

        // A change nobody requested through a control (a recommendation) has no origin.
        _ = try await runtime.submitProfile(try HearingProfile(
            left: try Audiogram([(500, 40), (1000, 45), (2000, 50), (4000, 60)]), right: nil))
        var seen: [ParameterChange<ParameterValue>] = []
        while seen.count < 3, let next = await changes.next() { seen.append(next) }
        #expect(seen.allSatisfy { $0.origin == nil })
        #expect(Set(seen.map(\.address)).isSuperset(of: ["/processing/preset", "/processing/intensity"]))
    }
}

@Suite struct ReadmeTests {
    /// The parameter table of docs/osc-guide.md is generated from the registry (`soundfit
    /// parameters`); this keeps them identical.
    @Test func theGuidesTableMatchesTheRegistry() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/osc-guide.md"), encoding: .utf8)
        #expect(guide.contains(ParameterTable.markdown(ParameterModel.all)),
                "docs/osc-guide.md's parameter table is out of date: paste the output of `soundfit parameters`")
    }
}

extension Array {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var result: [T] = []
        for element in self { result.append(await transform(element)) }
        return result
    }
}
