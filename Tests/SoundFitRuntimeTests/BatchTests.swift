import SoundFitTestSupport
import SoundFitModel
import SoundFitEngine
import SoundFitProcessing
import SoundFitRuntime
import Testing

@Suite struct BatchTests {
    /// A bundle's kernel values reach the audio thread together, each published once.
    @Test func aBatchPublishesEachKernelValueOnceAndAppliesThemTogether() async throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let cutoff = try #require(runtime.parameter(at: "/filter/cutoff"))
        let gain = try #require(runtime.parameter(at: "/output/gain"))
        // The mailbox numbers every published word; the newest number counts the publications.
        let newestSequence = { EngineSlot.allCases.map { runtime.engine.mailbox.publishedSequence(index: $0.rawValue) }.max()! }
        let before = newestSequence()
        let results = runtime.requestBatch([(cutoff, .float(440)), (gain, .float(-12))], origin: RequestOrigin("bundle"))
        for result in results {
            var last: UpdateStateName?
            for await state in try result.get().states { last = state.name }
            #expect(last == .applied)
        }
        #expect(newestSequence() - before == 2)
        let cycles = [EngineSlot.filterCutoff, .outputGain].map { runtime.engine.mailbox.acknowledgement(index: $0.rawValue).cycle }
        #expect(Set(cycles).count == 1)
    }

    /// An invalid value in a batch is refused alone; the others are requested.
    @Test func anInvalidValueInABatchIsRefusedAlone() async throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let cutoff = try #require(runtime.parameter(at: "/filter/cutoff"))
        let q = try #require(runtime.parameter(at: "/filter/q"))
        let results = runtime.requestBatch([(cutoff, .float(5)), (q, .float(2))], origin: nil)
        #expect(throws: ParameterError.self) { try results[0].get() }
        var last: UpdateStateName?
        for await state in try results[1].get().states { last = state.name }
        #expect(last == .applied)
        #expect(runtime.engine.value(of: .filterCutoff) == .float(1000))
    }
}
