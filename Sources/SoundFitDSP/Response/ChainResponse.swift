/// The magnitude response of the whole chain per ear (first channel of a pair: left ear, second:
/// right ear), computed from the same design the kernels run:
///
/// - personalization: the cascade solved for the band gains it applies now (`PersonalizationResponse`);
/// - filter: the cookbook biquad the filter stage designs (`FilterSettings.steadyCoefficients`);
/// - ring modulator: excluded, it is not linear time-invariant (it multiplies the signal by
///   `|sin(2π·f·t)|`, which moves energy to other frequencies); `ringModulator` says so when enabled;
/// - output gain: its gain in dB.
///
/// A bypassed stage contributes 0 dB. The output safety limit is transparent below its ceiling
/// and not part of the response. Values are the steady state the stages ramp to. Allocates; not
/// for the audio thread.
public struct ChainResponse: Sendable, Equatable {
    /// What one stage contributes.
    public enum Contribution: String, Sendable, Equatable {
        /// Part of the curve.
        case included
        /// Bypassed (disabled, or the personalization without a preset or at intensity 0): 0 dB.
        case bypassed
        /// Active but not part of the curve (the ring modulator is not LTI).
        case excluded
    }

    public var sampleRate: Double
    public var frequencies: [Double]
    /// dB per frequency.
    public var left: [Double]
    public var right: [Double]
    public var personalization: Contribution
    public var filter: Contribution
    public var ringModulator: Contribution
    public var outputGain: Contribution

    /// The point counts a response may have (`/response`'s `points`): 1024 points step 20 Hz–20
    /// kHz in a hundredth of an octave, and the OSC answer stays under the datagram limit.
    public static let pointRange: ClosedRange<Int> = 16...1024
    public static let defaultPoints = 128
    /// Values below this read as it (dB).
    public static let floor = -200.0
    public static let lowestFrequency = 20.0
    public static let highestFrequency = 20000.0

    /// `count` frequencies spaced logarithmically from 20 Hz to 20 kHz, both included.
    public static func logFrequencies(count: Int) -> [Double] {
        precondition(count >= 2)
        let ratio = libmLog(highestFrequency / lowestFrequency)
        return (0..<count).map { lowestFrequency * libmExp(ratio * Double($0) / Double(count - 1)) }
    }

    /// The response at `settings` and `sampleRate` at `points` log-spaced frequencies
    /// (`logFrequencies`). `personalization`: the band gains the personalization stage applies
    /// now, or nil when it is bypassed. Frequencies at or above Nyquist are evaluated all the same
    /// (the curve folds there); at 44.1 kHz and up the range stays below it.
    public init(settings: ChainSettings, sampleRate: Double, personalization: PersonalizationBandGains?,
                points: Int = ChainResponse.defaultPoints) {
        self.init(settings: settings, sampleRate: sampleRate, personalization: personalization,
                  frequencies: Self.logFrequencies(count: points))
    }

    /// The response at `frequencies` (Hz).
    public init(settings: ChainSettings, sampleRate: Double, personalization: PersonalizationBandGains?,
                frequencies: [Double]) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        let settings = settings.clamped()
        self.sampleRate = sampleRate
        self.frequencies = frequencies
        let coefficients = settings.filter.steadyCoefficients(sampleRate: sampleRate)
        let gain = settings.outputGain.isEnabled ? Double(settings.outputGain.gain) : 0
        let common = frequencies.map { coefficients.magnitudeDecibels(atFrequency: $0, sampleRate: sampleRate) + gain }
        var left = common, right = common
        if let personalization, let response = PersonalizationResponse(techLevel: personalization.techLevel,
                                                                       sampleRate: sampleRate) {
            let leftEar = response.decibels(atFrequencies: frequencies, bandGains: personalization.left)
            let rightEar = response.decibels(atFrequencies: frequencies, bandGains: personalization.right)
            for index in frequencies.indices {
                left[index] += leftEar[index]
                right[index] += rightEar[index]
            }
            self.personalization = .included
        } else {
            self.personalization = .bypassed
        }
        // A notch's centre is −inf dB: kept at the floor so every value is a finite number (JSON).
        self.left = left.map { max($0, Self.floor) }
        self.right = right.map { max($0, Self.floor) }
        filter = settings.filter.isEnabled ? .included : .bypassed
        ringModulator = settings.ringModulator.isEnabled ? .excluded : .bypassed
        outputGain = settings.outputGain.isEnabled && settings.outputGain.gain != 0 ? .included : .bypassed
    }
}

/// The band gains (dB) the personalization stage applies to each ear, one per band of its tech
/// level's layout (after intensity).
public struct PersonalizationBandGains: Sendable, Equatable {
    public var techLevel: Int
    public var left: [Double]
    public var right: [Double]

    /// Nil unless `techLevel` is 1…4 and each ear has one gain per band of its layout.
    public init?(techLevel: Int, left: [Double], right: [Double]) {
        guard let layout = MultibandLayout(techLevel: techLevel), left.count == layout.bandCount,
              right.count == layout.bandCount else { return nil }
        self.techLevel = techLevel
        self.left = left
        self.right = right
    }
}
