/// The international long-term average speech spectrum (LTASS) of Byrne et al. (1994, "An
/// international comparison of long-term average speech spectra", J. Acoust. Soc. Am.
/// 96(4):2108–2120): third-octave band levels (dB SPL) of speech at an overall level of 70 dB
/// SPL, as openMHA's `LTASS_speech_level_in_frequency_bands.m` tabulates them.
///
/// The fitting reads speech through it in two ways:
/// - `bandLevel(overall:powerResponse:)`: the level a filter passes (e.g. an analysis band-pass),
///   with each third-octave band's intensity spread evenly over its width in hertz (openMHA's
///   assumption), integrated against the filter's power response;
/// - `spectralDensity(at:overall:)`: the same spectrum as a density, to shape a speech-shaped noise.
public enum SpeechSpectrum {
    /// Third-octave centre frequencies (Hz), 63 Hz … 16 kHz.
    public static let centres: [Double] = [
        63, 80, 100, 125, 160, 200, 250, 315, 400, 500, 630, 800, 1000, 1250,
        1600, 2000, 2500, 3150, 4000, 5000, 6300, 8000, 10000, 12500, 16000,
    ]
    /// Band levels (dB SPL) at `referenceOverallLevel`.
    public static let levels: [Double] = [
        38.6, 43.5, 54.4, 57.7, 56.8, 60.2, 60.3, 59.0, 62.1, 62.1, 60.5, 56.8,
        53.7, 53.0, 52.0, 48.7, 48.1, 46.8, 45.6, 44.5, 44.3, 43.7, 43.4, 41.3, 40.7,
    ]
    /// The overall level (dB SPL) the table is published for.
    public static let referenceOverallLevel = 70.0

    /// Band edges (Hz): geometric means between neighbouring centres, 0 below the first band and
    /// 16 kHz · 2^(1/6) above the last (as openMHA takes them).
    public static let edges: [Double] = {
        var edges = [0.0]
        for (a, b) in zip(centres, centres.dropFirst()) { edges.append((a * b).squareRoot()) }
        edges.append(16000 * pow(2, 1.0 / 6))
        return edges
    }()

    /// The overall level of the table's bands summed (dB SPL): what `levels` add up to.
    public static var tableOverallLevel: Double {
        10 * log10(levels.reduce(0) { $0 + pow(10, $1 / 10) })
    }

    /// Power spectral density (dB SPL per hertz) of speech at `overall` dB SPL at `frequency`
    /// (Hz): the band's intensity over its width; −∞ outside 0 … 18 kHz.
    public static func spectralDensity(at frequency: Double, overall: Double) -> Double {
        guard frequency >= 0, let band = edges.indices.dropLast().first(where: { frequency < edges[$0 + 1] }) else {
            return -.infinity
        }
        return levels[band] + (overall - referenceOverallLevel) - 10 * log10(edges[band + 1] - edges[band])
    }

    /// The level (dB SPL) speech of `overall` dB SPL has after a filter with power response
    /// `powerResponse(f)` (|H(f)|², linear): ∫ density · |H|² df, by the trapezoid rule on a
    /// grid of `stepsPerBand` points per third-octave band.
    public static func bandLevel(overall: Double, stepsPerBand: Int = 64,
                                 powerResponse: (Double) -> Double) -> Double {
        var intensity = 0.0
        for band in levels.indices {
            let (lower, upper) = (edges[band], edges[band + 1])
            let density = pow(10, (levels[band] + overall - referenceOverallLevel) / 10) / (upper - lower)
            let step = (upper - lower) / Double(stepsPerBand)
            var sum = 0.5 * (powerResponse(lower) + powerResponse(upper))
            for i in 1..<stepsPerBand { sum += powerResponse(lower + Double(i) * step) }
            intensity += density * sum * step
        }
        return 10 * log10(intensity)
    }

    /// The level (dB SPL) of speech of `overall` dB SPL between `lower` and `upper` Hz (an ideal
    /// band-pass): openMHA's partial-overlap sum.
    public static func bandLevel(overall: Double, from lower: Double, to upper: Double) -> Double {
        var intensity = 0.0
        for band in levels.indices {
            let overlap = min(upper, edges[band + 1]) - max(lower, edges[band])
            guard overlap > 0 else { continue }
            intensity += pow(10, levels[band] / 10) * overlap / (edges[band + 1] - edges[band])
        }
        return 10 * log10(intensity) + overall - referenceOverallLevel
    }
}

#if canImport(Glibc)
import Glibc
#endif
