import SoundFitDSP

/// The parameters the audio engine applies on the real-time thread, one mailbox slot each.
///
/// The raw value is the slot index. Values travel to the audio thread as 32 bits
/// (`encode`/`decode`): a Float's bit pattern, 0/1 for booleans, the case index for choices.
public enum EngineParameter: Int, CaseIterable, Sendable {
    case filterEnabled
    case filterType
    case filterCutoff
    case filterQ
    case filterGain
    case ringModulatorEnabled
    case ringModulatorFrequency
    case ringModulatorMix
    case outputEnabled
    case outputGain
    /// The personalization stage's enable, set by the processing session (`/processing/enabled`
    /// is the session's parameter; this slot is how the session's handler reaches the audio thread).
    case personalizationEnabled
    /// The personalization stage's intensity, set by the processing session.
    case personalizationIntensity

    /// The kernel parameters a control surface sets directly. The personalization slots are
    /// driven by the processing session instead.
    public static let kernelParameters: [EngineParameter] = allCases.filter { !$0.isSessionSlot }

    /// Whether the slot belongs to the processing session's handler rather than to a surface.
    public var isSessionSlot: Bool {
        self == .personalizationEnabled || self == .personalizationIntensity
    }

    /// The registry entry: address, kind, range, default, unit.
    public var descriptor: ParameterDescriptor {
        let defaults = ChainSettings()
        switch self {
        case .filterEnabled:
            return ParameterDescriptor(
                address: "/filter/enabled", kind: .bool, defaultValue: .bool(defaults.filter.isEnabled),
                summary: "Biquad filter on/off (off is a bit-exact bypass after a 10 ms fade).")
        case .filterType:
            return ParameterDescriptor(
                address: "/filter/type", kind: .choice(FilterType.allCases.map(\.name)),
                defaultValue: .choice(defaults.filter.type.name),
                summary: "RBJ biquad response type.")
        case .filterCutoff:
            return ParameterDescriptor(
                address: "/filter/cutoff", kind: .float(20...20000), defaultValue: .float(defaults.filter.cutoff),
                unit: "Hz", summary: "Cutoff or centre frequency.")
        case .filterQ:
            return ParameterDescriptor(
                address: "/filter/q", kind: .float(0.1...18), defaultValue: .float(defaults.filter.q),
                summary: "Quality factor.")
        case .filterGain:
            return ParameterDescriptor(
                address: "/filter/gain", kind: .float(-24...24), defaultValue: .float(defaults.filter.gain),
                unit: "dB", summary: "Gain of the peak and shelf types.")
        case .ringModulatorEnabled:
            return ParameterDescriptor(
                address: "/ringmod/enabled", kind: .bool, defaultValue: .bool(defaults.ringModulator.isEnabled),
                summary: "Ring modulator on/off.")
        case .ringModulatorFrequency:
            return ParameterDescriptor(
                address: "/ringmod/frequency", kind: .float(15...40),
                defaultValue: .float(defaults.ringModulator.frequency), unit: "Hz",
                summary: "Modulator frequency f: output = input · abs(sin(2π·f·t)).")
        case .ringModulatorMix:
            return ParameterDescriptor(
                address: "/ringmod/mix", kind: .float(0...1), defaultValue: .float(defaults.ringModulator.mix),
                summary: "Wet share of the ring modulator (0 = dry, 1 = fully modulated).")
        case .outputEnabled:
            return ParameterDescriptor(
                address: "/output/enabled", kind: .bool, defaultValue: .bool(defaults.outputGain.isEnabled),
                summary: "Output gain stage on/off (off = unity).")
        case .outputGain:
            return ParameterDescriptor(
                address: "/output/gain", kind: .float(-60...12), defaultValue: .float(defaults.outputGain.gain),
                unit: "dB", summary: "Output gain, smoothed.")
        case .personalizationEnabled:
            return ParameterDescriptor(
                address: "/processing/enabled", kind: .bool, defaultValue: .bool(false),
                summary: "Hearing personalization on/off (the session's isEnabled).")
        case .personalizationIntensity:
            return ParameterDescriptor(
                address: "/processing/intensity", kind: .float(0...1), defaultValue: .float(0.5),
                summary: "How much personalization is applied: 0 = transparent, 1 = the full preset.")
        }
    }

    /// Looks a kernel parameter up by its OSC address.
    public init?(address: String) {
        guard let match = Self.byAddress[address] else { return nil }
        self = match
    }

    private static let byAddress: [String: EngineParameter] = Dictionary(
        uniqueKeysWithValues: kernelParameters.map { ($0.descriptor.address, $0) })

    /// 32-bit form of a validated value for the mailbox. Control thread.
    public func encode(_ value: ParameterValue) -> UInt32 {
        switch value {
        case .bool(let on): return on ? 1 : 0
        case .float(let v): return v.bitPattern
        case .int(let v): return UInt32(truncatingIfNeeded: v)
        case .choice(let name):
            if case .choice(let names) = descriptor.kind, let index = names.firstIndex(of: name) {
                return UInt32(index)
            }
            return 0
        }
    }

    /// The value a 32-bit mailbox word stands for. Control thread.
    public func decode(_ bits: UInt32) -> ParameterValue {
        switch descriptor.kind {
        case .bool: return .bool(bits != 0)
        case .float: return .float(Float(bitPattern: bits))
        case .int: return .int(Int(Int32(bitPattern: bits)))
        case .choice(let names): return .choice(names[min(Int(bits), names.count - 1)])
        }
    }

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
