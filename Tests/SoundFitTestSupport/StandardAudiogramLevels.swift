/// The standard audiograms of Bisgaard, Vlaming & Dahlquist (2010, Trends in Amplification
/// 14(2)), as published: thresholds in dB HL at `frequencies`.
/// The one copy of the table for the tests and the benchmarks.
public enum StandardAudiogramLevels {
    public static let frequencies: [Double] = [250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000]

    /// Every standard audiogram, in the order of the publication's table.
    public static let all: [(name: String, levels: [Double])] = [
        ("N1", [10, 10, 10, 10, 10, 10, 15, 20, 30, 40]), ("N2", [20, 20, 20, 22.5, 25, 30, 35, 40, 45, 50]),
        ("N3", [35, 35, 35, 35, 40, 45, 50, 55, 60, 65]), ("N4", [55, 55, 55, 55, 55, 60, 65, 70, 75, 80]),
        ("N5", [65, 67.5, 70, 72.5, 75, 80, 80, 80, 80, 80]), ("S1", [10, 10, 10, 10, 10, 10, 15, 30, 55, 70]),
        ("S2", [20, 20, 20, 22.5, 25, 35, 55, 75, 95, 95]), ("S3", [30, 30, 35, 47.5, 60, 70, 75, 80, 80, 85]),
    ]

    /// The thresholds of the audiogram called `name` (N1…N5, S1…S3).
    public static func levels(_ name: String) -> [Double] {
        all.first { $0.name == name }!.levels
    }
}
