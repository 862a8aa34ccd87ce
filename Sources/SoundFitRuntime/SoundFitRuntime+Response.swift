import SoundFitDSP
import SoundFitEngine
import SoundFitModel

extension SoundFitRuntime {
    /// The magnitude response of the whole chain per ear as it runs now (see `ChainResponse`):
    /// the values published to the engine, at the running sample rate, and the band gains the
    /// personalization applies at this moment — at the current input level and intensity, as
    /// the audio thread reports them over two cycles of metering.
    /// Throws `ControlError` when no audio runs (no sample rate yet, or no cycle within 0.25 s).
    public func currentResponse(points: Int) async throws(ControlError) -> ChainResponse {
        guard let sampleRate = engine.sampleRate else {
            throw ControlError("no audio system yet: the sample rate is not known")
        }
        let settings = engine.settings
        guard let reading = await engine.meterOnce() else {
            throw ControlError("the audio engine runs no cycles (JACK server gone or stalled)")
        }
        var bandGains: PersonalizationBandGains?
        if let left = reading.channels.first, !left.bandGains.isEmpty {
            // Mono: the one channel is the left ear, as the personalization processes it.
            let right = reading.channels.count > 1 ? reading.channels[1] : left
            bandGains = PersonalizationBandGains(techLevel: engine.personalizationTechLevel,
                                                 left: left.bandGains, right: right.bandGains)
        }
        return ChainResponse(settings: settings, sampleRate: sampleRate, personalization: bandGains, points: points)
    }
}
