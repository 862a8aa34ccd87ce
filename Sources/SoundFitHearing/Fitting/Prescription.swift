/// NAL-RP insertion gain: NAL-R (Byrne & Dillon 1986, Ear Hear 7:257–265) with the severe-loss
/// extensions of Byrne, Parkinson & Newall (1990, Ear Hear 11:40–49; 1991, Vanderbilt Hearing
/// Aid Report II, 295–300), as published and as openMHA's reference implementation
/// (`NalRP.m`, A. Leijon) applies them:
///
///     H3FA  = (H(500) + H(1000) + H(2000)) / 3
///     IG(f) = 0.31·H(f) + 0.15·H3FA + k(f)
///     k(f)  = −17, −8, +1, +1, −1, −2, −2, −2   (250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k Hz)
///     NAL-RP: if H3FA > 60,       IG += 0.2·(H3FA − 60)
///     NAL-RP: if H(2000) ≥ 95,    IG += the severe-loss correction (1991, Fig. 9), interpolated
///                                  linearly in H(2000) between its rows, the 120 row held above
///     IG = max(IG, 0)              (NAL-R never prescribes a loss)
///
/// Between the eight points the gain is interpolated in log frequency; outside them it tapers,
/// as `NalRP.m` does, linearly in log frequency to 0 dB at 50 Hz and at 10 kHz (and is 0 beyond).
public enum NALPrescription {
    /// The frequencies NAL-R defines a correction for.
    public static let frequencies: [Double] = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
    static let corrections: [Double] = [-17, -8, 1, 1, -1, -2, -2, -2]
    /// Where the gain has tapered to 0 dB below and above the prescribed range.
    public static let taperEnds: (low: Double, high: Double) = (50, 10000)

    /// The severe-loss correction (dB, at `frequencies`) per row of H(2000) (Byrne, Parkinson &
    /// Newall 1991, Fig. 9).
    static let severeLossRows: [(hearingLevel: Double, corrections: [Double])] = [
        (95, [4, 3, 0, -1, -2, -2, -2, -2]),
        (100, [6, 4, 0, -2, -3, -3, -3, -3]),
        (105, [8, 5, 0, -3, -5, -5, -5, -5]),
        (110, [11, 7, 0, -3, -6, -6, -6, -6]),
        (115, [13, 8, 0, -4, -8, -8, -8, -8]),
        (120, [15, 9, 0, -5, -9, -9, -9, -9]),
    ]

    /// The severe-loss correction (dB at `frequencies`) for a 2 kHz threshold of `h2000` dB HL:
    /// zeros below 95 dB HL.
    public static func severeLossCorrection(h2000: Double) -> [Double] {
        let rows = severeLossRows
        guard h2000 >= rows[0].hearingLevel else { return [Double](repeating: 0, count: frequencies.count) }
        guard h2000 < rows[rows.count - 1].hearingLevel else { return rows[rows.count - 1].corrections }
        let upper = rows.firstIndex { $0.hearingLevel > h2000 }!
        let (a, b) = (rows[upper - 1], rows[upper])
        let t = (h2000 - a.hearingLevel) / (b.hearingLevel - a.hearingLevel)
        return zip(a.corrections, b.corrections).map { $0 + t * ($1 - $0) }
    }

    /// Insertion gains in dB at `frequencies`.
    public static func insertionGains(for audiogram: Audiogram) -> [Double] {
        let h3fa = (audiogram.threshold(at: 500) + audiogram.threshold(at: 1000) + audiogram.threshold(at: 2000)) / 3
        let severeExtension = h3fa > 60 ? 0.2 * (h3fa - 60) : 0
        let severeCorrection = severeLossCorrection(h2000: audiogram.threshold(at: 2000))
        return frequencies.indices.map { index in
            max(0, 0.31 * audiogram.threshold(at: frequencies[index]) + 0.15 * h3fa + corrections[index]
                + severeExtension + severeCorrection[index])
        }
    }

    /// The insertion gain at any frequency: interpolated in log frequency between the NAL-R
    /// points, tapered to 0 dB at 50 Hz and 10 kHz outside them.
    public static func insertionGain(for audiogram: Audiogram, at frequency: Double) -> Double {
        interpolate(insertionGains(for: audiogram), at: frequency)
    }

    /// `gains` (at `frequencies`) at `frequency`, with the taper outside 250 Hz … 6 kHz.
    public static func interpolate(_ gains: [Double], at frequency: Double) -> Double {
        let points = [(taperEnds.low, 0.0)] + Array(zip(frequencies, gains)) + [(taperEnds.high, 0.0)]
        if frequency <= points[0].0 || frequency >= points[points.count - 1].0 { return 0 }
        let upper = points.firstIndex { $0.0 >= frequency }!
        if points[upper].0 == frequency { return points[upper].1 }
        let (a, b) = (points[upper - 1], points[upper])
        let t = (log2(frequency) - log2(a.0)) / (log2(b.0) - log2(a.0))
        return a.1 + t * (b.1 - a.1)
    }
}

#if canImport(Glibc)
import Glibc
#endif
