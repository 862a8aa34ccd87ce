// Compile-time proof that the audio-thread API of SoundFitDSP is real-time safe.
//
// `@_noLocks` makes the compiler reject, in this function and everything it calls, any heap
// allocation, reference counting, lock, existential, generic metadata instantiation, lazy global
// or call to a function whose body it cannot see. The build fails if a kernel regresses.
// (C library calls are trusted through the `@_semantics("no_performance_analysis")` wrappers in
// LibM.swift.) The function is never called.
//
// Only checked in release builds: a debug build compiles file by file, so the compiler cannot
// see the bodies of functions in other files and would reject every call.
#if !DEBUG

@_noLocks
func realtimeSafetyCheck(chain: inout ProcessingChain,
                         filter: inout BiquadFilter,
                         ringModulator: inout RingModulator,
                         outputGain: inout OutputGain,
                         personalization: inout PersonalizationProcessor,
                         prepared: Unmanaged<PreparedPersonalization>,
                         settings: ChainSettings,
                         inputs: UnsafePointer<UnsafePointer<Float>>,
                         outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                         frameCount: Int,
                         sampleRate: Double) {
    chain.apply(settings)
    chain.process(inputs: inputs, outputs: outputs, frameCount: frameCount)
    chain.reset()
    chain.setSampleRate(sampleRate)
    _ = chain.settings
    _ = chain.isPassthrough
    _ = chain.installPersonalization(prepared)
    _ = chain.removePersonalization()
    _ = chain.setPersonalizationTechLevel(4)
    _ = chain.installedPersonalization
    _ = chain.isPersonalizationBypassed
    _ = chain.meteredBandCount
    _ = chain.personalizationBandMeter(channel: 1, band: 3)

    personalization.apply(settings.personalization)
    _ = personalization.install(prepared)
    personalization.process(outputs, frameCount: frameCount)
    _ = personalization.removePreset()
    _ = personalization.setTechLevel(2)
    personalization.reset()
    personalization.setSampleRate(sampleRate)

    filter.apply(settings.filter)
    filter.process(outputs, frameCount: frameCount)
    filter.reset()
    filter.setSampleRate(sampleRate)

    ringModulator.apply(settings.ringModulator)
    ringModulator.process(outputs, frameCount: frameCount)
    ringModulator.advance(frames: frameCount)
    ringModulator.reset()
    ringModulator.setSampleRate(sampleRate)

    outputGain.apply(settings.outputGain)
    outputGain.process(outputs, frameCount: frameCount)
    outputGain.reset()
    outputGain.setSampleRate(sampleRate)
}
#endif
