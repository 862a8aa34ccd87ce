import SoundFitHearing

/// The standard audiograms of Bisgaard, Vlaming & Dahlquist (2010, Trends in Amplification
/// 14(2)) as the tests spell them: thresholds in dB HL at `frequencies`. Reads the one table,
/// `StandardAudiogram`.
public enum StandardAudiogramLevels {
    public static let frequencies: [Double] = StandardAudiogram.frequencies

    /// Every standard audiogram, in the order of the publication's table.
    public static let all: [(name: String, levels: [Double])] = StandardAudiogram.all.map { ($0.name, $0.levels) }

    /// The thresholds of the audiogram called `name` (N1…N7, S1…S3).
    public static func levels(_ name: String) -> [Double] {
        StandardAudiogram.named(name)!.levels
    }
}
