/// The standard audiograms of the IEC 60118-15 measurement procedure (Bisgaard, Vlaming &
/// Dahlquist 2010, "Standard audiograms for the IEC 60118-15 measurement procedure", Trends in
/// Amplification 14(2):113–120, Table 2): seven flat and moderately sloping losses (N1 very mild …
/// N7 profound) and three steep ones (S1…S3), thresholds in dB HL at `frequencies`.
///
/// The rows are the paper's; N6 and N7 were checked against the Auditory Modeling Toolbox's
/// `standardaudiogram.m` (AMT 1.6, implementation approved by N. Bisgaard, 2024).
/// They are the fixtures a fitting is verified on: `soundfit verify --audiogram N3`, the tests
/// and the benchmarks all read this one table.
public struct StandardAudiogram: Sendable, Equatable {
    /// The frequencies (Hz) of every row.
    public static let frequencies: [Double] = [250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000]

    /// "N1" … "N7", "S1" … "S3".
    public let name: String
    /// Thresholds (dB HL) at `frequencies`.
    public let levels: [Double]

    /// Every standard audiogram, in the paper's order.
    public static let all: [StandardAudiogram] = [
        StandardAudiogram(name: "N1", levels: [10, 10, 10, 10, 10, 10, 15, 20, 30, 40]),
        StandardAudiogram(name: "N2", levels: [20, 20, 20, 22.5, 25, 30, 35, 40, 45, 50]),
        StandardAudiogram(name: "N3", levels: [35, 35, 35, 35, 40, 45, 50, 55, 60, 65]),
        StandardAudiogram(name: "N4", levels: [55, 55, 55, 55, 55, 60, 65, 70, 75, 80]),
        StandardAudiogram(name: "N5", levels: [65, 67.5, 70, 72.5, 75, 80, 80, 80, 80, 80]),
        StandardAudiogram(name: "N6", levels: [75, 77.5, 80, 82.5, 85, 90, 90, 95, 100, 100]),
        StandardAudiogram(name: "N7", levels: [90, 92.5, 95, 100, 105, 105, 105, 105, 105, 105]),
        StandardAudiogram(name: "S1", levels: [10, 10, 10, 10, 10, 10, 15, 30, 55, 70]),
        StandardAudiogram(name: "S2", levels: [20, 20, 20, 22.5, 25, 35, 55, 75, 95, 95]),
        StandardAudiogram(name: "S3", levels: [30, 30, 35, 47.5, 60, 70, 75, 80, 80, 85]),
    ]

    /// The standard audiogram called `name` (case-insensitive), or nil.
    public static func named(_ name: String) -> StandardAudiogram? {
        all.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The row as an `Audiogram` (thresholds between and beyond the points as `Audiogram` reads them).
    public var audiogram: Audiogram {
        // The table's values are all in range and its frequencies distinct: this cannot throw.
        try! Audiogram(Array(zip(Self.frequencies, levels)))
    }
}
