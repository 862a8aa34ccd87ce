/// Target settings of the whole processing chain, one value per stage.
public struct ChainSettings: Sendable, Equatable {
    /// Stage 0: the multiband personalization processor.
    public var personalization: PersonalizationSettings
    public var filter: FilterSettings
    public var ringModulator: RingModulatorSettings
    public var outputGain: OutputGainSettings

    public init(filter: FilterSettings = FilterSettings(),
                ringModulator: RingModulatorSettings = RingModulatorSettings(),
                outputGain: OutputGainSettings = OutputGainSettings(),
                personalization: PersonalizationSettings = PersonalizationSettings()) {
        self.personalization = personalization
        self.filter = filter
        self.ringModulator = ringModulator
        self.outputGain = outputGain
    }

    /// Every stage's settings clamped into safe bounds (numerical safety, not the parameter
    /// ranges, which are checked before values reach the engine). Real-time safe.
    public func clamped() -> ChainSettings {
        ChainSettings(filter: filter.clamped(), ringModulator: ringModulator.clamped(),
                      outputGain: outputGain.clamped(), personalization: personalization.clamped())
    }
}
