/// The eight responses of Robert Bristow-Johnson's Audio EQ Cookbook.
public enum FilterType: UInt32, CaseIterable, Sendable {
    case lowpass = 0, highpass, bandpass, notch, peak, lowshelf, highshelf, allpass

    /// The OSC name: `lowpass`, `highpass`, `bandpass`, `notch`, `peak`, `lowshelf`, `highshelf`, `allpass`.
    public var name: String {
        switch self {
        case .lowpass: "lowpass"
        case .highpass: "highpass"
        case .bandpass: "bandpass"
        case .notch: "notch"
        case .peak: "peak"
        case .lowshelf: "lowshelf"
        case .highshelf: "highshelf"
        case .allpass: "allpass"
        }
    }

    /// The type named `name` (exactly as `name` spells it), or nil.
    public init?(name: String) {
        guard let type = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = type
    }

    /// True for the types whose response depends on `FilterSettings.gain` (peak and shelves).
    public var usesGain: Bool {
        switch self {
        case .peak, .lowshelf, .highshelf: true
        default: false
        }
    }
}
