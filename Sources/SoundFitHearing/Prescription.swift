/// NAL-R insertion gain with the NAL-RP severe-loss extension (Byrne & Dillon 1986; Byrne,
/// Parkinson & Newall 1990), as published:
///
///     H3FA  = (H(500) + H(1000) + H(2000)) / 3
///     IG(f) = 0.31·H(f) + 0.15·H3FA + k(f)
///     k(f)  = −17, −8, +1, +1, −1, −2, −2, −2   (250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k Hz)
///     NAL-RP: if H3FA > 60, IG += 0.2·(H3FA − 60)
///     IG = max(IG, 0); interpolated in log frequency between the points
public enum NALPrescription {
    /// The frequencies NAL-R defines a correction for.
    public static let frequencies: [Double] = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
    static let corrections: [Double] = [-17, -8, 1, 1, -1, -2, -2, -2]

    /// Insertion gains in dB at `frequencies`.
    public static func insertionGains(for audiogram: Audiogram) -> [Double] {
        let h3fa = (audiogram.threshold(at: 500) + audiogram.threshold(at: 1000) + audiogram.threshold(at: 2000)) / 3
        let severeExtension = h3fa > 60 ? 0.2 * (h3fa - 60) : 0
        return zip(frequencies, corrections).map { frequency, k in
            max(0, 0.31 * audiogram.threshold(at: frequency) + 0.15 * h3fa + k + severeExtension)
        }
    }

    /// The insertion gain at any frequency: interpolated in log frequency between the NAL-R
    /// points and held flat below 250 Hz and above 6 kHz.
    public static func insertionGain(for audiogram: Audiogram, at frequency: Double) -> Double {
        interpolate(insertionGains(for: audiogram), at: frequency)
    }

    static func interpolate(_ gains: [Double], at frequency: Double) -> Double {
        if frequency <= frequencies[0] { return gains[0] }
        if frequency >= frequencies[frequencies.count - 1] { return gains[gains.count - 1] }
        let upper = frequencies.firstIndex { $0 >= frequency }!
        if frequencies[upper] == frequency { return gains[upper] }
        let t = (log2(frequency) - log2(frequencies[upper - 1])) / (log2(frequencies[upper]) - log2(frequencies[upper - 1]))
        return gains[upper - 1] + t * (gains[upper] - gains[upper - 1])
    }
}

#if canImport(Glibc)
import Glibc
#endif
