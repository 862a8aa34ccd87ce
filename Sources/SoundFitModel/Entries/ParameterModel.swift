/// SoundFit's parameters, one declarative entry each, session and kernel alike. Everything
/// else derives from this list: the engine's slot mapping, OSC dispatch, `/list`,
/// `soundfit parameters`, the documentation tables, patch and state coding, fader tapers.
///
/// Adding a kernel parameter: add its entry here (and to `kernels`), its `EngineSlot` case, and
/// its DSP (the settings field the slot writes). A session parameter is declared in
/// `SessionParameter.swift` (its entry, name and the values it travels as), held by
/// `ProcessingSession` and applied by `EngineProcessingHandler`; the compiler lists each switch
/// that misses it. `ParameterModelCoverageTests` fails until every consumer covers it.
public enum ParameterModel {
    // MARK: Kernels

    public static let filterEnabled = ParameterDescriptor(
        address: "/filter/enabled", kind: .bool, defaultValue: .bool(false),
        summary: "Biquad filter on/off (off is a bit-exact bypass after a 10 ms fade).",
        displayName: "Filter", binding: .engine(.filterEnabled))
    public static let filterType = ParameterDescriptor(
        address: "/filter/type",
        kind: .choice(["lowpass", "highpass", "bandpass", "notch", "peak", "lowshelf", "highshelf", "allpass"]),
        defaultValue: .choice("lowpass"),
        summary: "RBJ biquad response type.",
        displayName: "Filter type", binding: .engine(.filterType))
    public static let filterCutoff = ParameterDescriptor(
        address: "/filter/cutoff", kind: .float(20...20000), defaultValue: .float(1000), unit: "Hz",
        summary: "Cutoff or centre frequency.",
        displayName: "Filter cutoff", binding: .engine(.filterCutoff))
    public static let filterQ = ParameterDescriptor(
        address: "/filter/q", kind: .float(0.1...18), defaultValue: .float(0.7071),
        summary: "Quality factor.",
        displayName: "Filter Q", binding: .engine(.filterQ))
    public static let filterGain = ParameterDescriptor(
        address: "/filter/gain", kind: .float(-24...24), defaultValue: .float(0), unit: "dB",
        summary: "Gain of the peak and shelf types.",
        displayName: "Filter gain", binding: .engine(.filterGain))
    public static let ringModulatorEnabled = ParameterDescriptor(
        address: "/ringmod/enabled", kind: .bool, defaultValue: .bool(false),
        summary: "Ring modulator on/off.",
        displayName: "Ring modulator", binding: .engine(.ringModulatorEnabled))
    public static let ringModulatorFrequency = ParameterDescriptor(
        address: "/ringmod/frequency", kind: .float(15...40), defaultValue: .float(22), unit: "Hz",
        summary: "Modulator frequency f: output = input · abs(sin(2π·f·t)).",
        displayName: "Ring modulator frequency", binding: .engine(.ringModulatorFrequency))
    public static let ringModulatorMix = ParameterDescriptor(
        address: "/ringmod/mix", kind: .float(0...1), defaultValue: .float(1),
        summary: "Wet share of the ring modulator (0 = dry, 1 = fully modulated).",
        displayName: "Ring modulator mix", binding: .engine(.ringModulatorMix))
    public static let outputEnabled = ParameterDescriptor(
        address: "/output/enabled", kind: .bool, defaultValue: .bool(true),
        summary: "Output gain stage on/off (off = unity).",
        displayName: "Output gain stage", binding: .engine(.outputEnabled))
    public static let outputGain = ParameterDescriptor(
        address: "/output/gain", kind: .float(-60...12), defaultValue: .float(0), unit: "dB",
        summary: "Output gain, smoothed.",
        displayName: "Output gain", binding: .engine(.outputGain))

    // MARK: The address space

    /// Every entry in address-space order: the session's parameters, then the kernels'.
    public static let all: [ParameterDescriptor] = session + kernels

    /// The kernel entries, each bound to its engine slot.
    public static let kernels: [ParameterDescriptor] = [
        filterEnabled, filterType, filterCutoff, filterQ, filterGain,
        ringModulatorEnabled, ringModulatorFrequency, ringModulatorMix,
        outputEnabled, outputGain,
    ]

    /// The entries a surface, a patch or the state file may set.
    public static let writable: [ParameterDescriptor] = all.filter { $0.access == .readWrite }

    /// The entry at `address`, if there is one.
    public static func entry(at address: String) -> ParameterDescriptor? { byAddress[address] }

    /// The entry bound to `parameter`.
    public static func entry(for parameter: SessionParameter.Name) -> ParameterDescriptor {
        session.first { $0.binding == .session(parameter) }!
    }

    /// The entry whose values `slot` carries: the kernel entry bound to it, or for the
    /// personalization slots the session parameter their handler writes there.
    public static func entry(for slot: EngineSlot) -> ParameterDescriptor {
        slotEntries[slot.rawValue]
    }

    private static let byAddress: [String: ParameterDescriptor] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.address, $0) })

    private static let slotEntries: [ParameterDescriptor] = EngineSlot.allCases.map { slot in
        switch slot {
        case .personalizationEnabled: processingEnabled
        case .personalizationIntensity: processingIntensity
        default: kernels.first { $0.binding == .engine(slot) }!
        }
    }
}
