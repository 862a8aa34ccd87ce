/// What a hearing test can be set to besides its ears and frequencies: the timing of the
/// presentations, steady or pulsed tones, the highest level to present and the earphone.
///
/// The bounds let a test present a tone every 2 s or faster (tone 0.2 s, window 0.05…0.4 s,
/// gaps from 0.1 s: a presentation about every 0.5 s), so automated tests run quickly; the
/// defaults are the clinical ones of `TestTiming`.
public struct HearingTestSettings: Sendable, Equatable {
    public var timing: TestTiming
    /// Pulsed tones (`ToneStimulus.pulseSeconds` on, as long off) instead of steady ones.
    public var isPulsed: Bool
    /// The highest level presented, dB HL; where the output safety limit allows less, that less.
    public var maximumLevel: Double
    public var earphone: EarphoneTable

    public static let toneSecondsRange: ClosedRange<Double> = 0.2...5
    public static let windowStartRange: ClosedRange<Double> = 0.05...1
    public static let windowEndRange: ClosedRange<Double> = 0.4...5
    public static let gapRange: ClosedRange<Double> = 0.1...10
    public static let maximumLevelRange: ClosedRange<Double> = -10...120
    public static let defaultMaximumLevel = 90.0

    public init(timing: TestTiming = TestTiming(), isPulsed: Bool = false,
                maximumLevel: Double = HearingTestSettings.defaultMaximumLevel, earphone: EarphoneTable = .tdh39) {
        self.timing = timing
        self.isPulsed = isPulsed
        self.maximumLevel = maximumLevel
        self.earphone = earphone
    }

    /// Throws the first value out of its range, or a window or gap range that is empty.
    public func validate() throws(HearingTestSettingsError) {
        func check(_ key: String, _ value: Double, _ range: ClosedRange<Double>) throws(HearingTestSettingsError) {
            guard value.isFinite, range.contains(value) else { throw .outOfRange(key: key, value: value, range: range) }
        }
        try check("tone_seconds", timing.toneSeconds, Self.toneSecondsRange)
        try check("window_start", timing.windowStart, Self.windowStartRange)
        try check("window_end", timing.windowEnd, Self.windowEndRange)
        try check("gap_min", timing.gapMinimum, Self.gapRange)
        try check("gap_max", timing.gapMaximum, Self.gapRange)
        try check("max_db_hl", maximumLevel, Self.maximumLevelRange)
        guard timing.windowStart < timing.windowEnd else {
            throw .inverted("window_start \(timing.windowStart) must be below window_end \(timing.windowEnd)")
        }
        guard timing.gapMinimum <= timing.gapMaximum else {
            throw .inverted("gap_min \(timing.gapMinimum) must not exceed gap_max \(timing.gapMaximum)")
        }
    }
}

/// Why hearing test settings were refused.
public enum HearingTestSettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    case outOfRange(key: String, value: Double, range: ClosedRange<Double>)
    case inverted(String)

    public var description: String {
        switch self {
        case .outOfRange(let key, let value, let range):
            "\(key) \(value) is outside \(range.lowerBound)…\(range.upperBound)"
        case .inverted(let message): message
        }
    }
}
