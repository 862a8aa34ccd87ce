import SoundFitDSP
import SoundFitModel

/// How each engine slot maps onto the chain settings the kernels read. The engine knows slots
/// only; the parameter each slot carries (address, range, prose) lives in `ParameterModel`.
extension EngineSlot {
    /// Writes a mailbox word into the chain settings.
    /// Real-time safe: a switch over plain values, no allocation.
    @inline(__always)
    public func store(_ bits: UInt32, into settings: inout ChainSettings) {
        switch self {
        case .filterEnabled: settings.filter.isEnabled = bits != 0
        case .filterType: settings.filter.type = FilterType(rawValue: bits) ?? .lowpass
        case .filterCutoff: settings.filter.cutoff = Float(bitPattern: bits)
        case .filterQ: settings.filter.q = Float(bitPattern: bits)
        case .filterGain: settings.filter.gain = Float(bitPattern: bits)
        case .ringModulatorEnabled: settings.ringModulator.isEnabled = bits != 0
        case .ringModulatorFrequency: settings.ringModulator.frequency = Float(bitPattern: bits)
        case .ringModulatorMix: settings.ringModulator.mix = Float(bitPattern: bits)
        case .outputEnabled: settings.outputGain.isEnabled = bits != 0
        case .outputGain: settings.outputGain.gain = Float(bitPattern: bits)
        case .personalizationEnabled: settings.personalization.isEnabled = bits != 0
        case .personalizationIntensity: settings.personalization.intensity = Float(bitPattern: bits)
        }
    }

    /// The mailbox word for this parameter's value in `settings`.
    public func load(from settings: ChainSettings) -> UInt32 {
        switch self {
        case .filterEnabled: settings.filter.isEnabled ? 1 : 0
        case .filterType: settings.filter.type.rawValue
        case .filterCutoff: settings.filter.cutoff.bitPattern
        case .filterQ: settings.filter.q.bitPattern
        case .filterGain: settings.filter.gain.bitPattern
        case .ringModulatorEnabled: settings.ringModulator.isEnabled ? 1 : 0
        case .ringModulatorFrequency: settings.ringModulator.frequency.bitPattern
        case .ringModulatorMix: settings.ringModulator.mix.bitPattern
        case .outputEnabled: settings.outputGain.isEnabled ? 1 : 0
        case .outputGain: settings.outputGain.gain.bitPattern
        case .personalizationEnabled: settings.personalization.isEnabled ? 1 : 0
        case .personalizationIntensity: settings.personalization.intensity.bitPattern
        }
    }
}
