/// Band levels of recorded signals, measured the way a fitting is verified: Welch-averaged
/// power spectra (Hann windows of `segmentLength` samples, half overlapping), summed over
/// ±1/6 octave around each centre frequency. Insertion gain in a band is the output's band power
/// over the input's, in dB. Off the audio thread only: allocates.
public struct BandPowerAnalysis: Sendable {
    public var sampleRate: Double
    /// Samples per FFT segment (a power of two); 8192 at 48 kHz resolves 5.9 Hz, so a ±1/6
    /// octave band around 250 Hz spans about 20 bins.
    public var segmentLength: Int
    /// Half-width of a band in octaves (1/6: a third-octave band).
    public var halfWidthOctaves: Double

    public init(sampleRate: Double, segmentLength: Int = 8192, halfWidthOctaves: Double = 1.0 / 6) {
        precondition(segmentLength > 0 && segmentLength & (segmentLength - 1) == 0)
        self.sampleRate = sampleRate
        self.segmentLength = segmentLength
        self.halfWidthOctaves = halfWidthOctaves
    }

    /// Mean power per bin (k = 0 … N/2) of `signal`, Welch-averaged.
    public func powerSpectrum(_ signal: ArraySlice<Float>) -> [Double] {
        let n = segmentLength
        precondition(signal.count >= n, "at least one segment (\(n) samples) is needed")
        let window = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n)) }
        var sum = [Double](repeating: 0, count: n / 2 + 1)
        var segments = 0
        var start = signal.startIndex
        while start + n <= signal.endIndex {
            var re = (0..<n).map { Double(signal[start + $0]) * window[$0] }
            var im = [Double](repeating: 0, count: n)
            FourierTransform.transform(&re, &im)
            for k in 0...(n / 2) { sum[k] += re[k] * re[k] + im[k] * im[k] }
            segments += 1
            start += n / 2
        }
        return sum.map { $0 / Double(segments) }
    }

    /// Power (linear, arbitrary units shared by every call with this analysis) of `spectrum`
    /// between `centre`·2^(∓halfWidthOctaves).
    public func bandPower(_ spectrum: [Double], centre: Double) -> Double {
        let binWidth = sampleRate / Double(segmentLength)
        let lower = centre * pow(2, -halfWidthOctaves), upper = centre * pow(2, halfWidthOctaves)
        let first = max(1, Int((lower / binWidth).rounded(.up)))
        let last = min(spectrum.count - 1, Int((upper / binWidth).rounded(.down)))
        guard first <= last else { return 0 }
        return spectrum[first...last].reduce(0, +)
    }

    /// Output over input power (dB) in the band around each of `centres`.
    public func insertionGains(input: ArraySlice<Float>, output: ArraySlice<Float>, centres: [Double]) -> [Double] {
        let inputSpectrum = powerSpectrum(input), outputSpectrum = powerSpectrum(output)
        return centres.map { centre in
            10 * log10(bandPower(outputSpectrum, centre: centre) / bandPower(inputSpectrum, centre: centre))
        }
    }

    /// Band levels (dB SPL) of `signal` around each of `centres`, with a full-scale sine
    /// standing for `fullScaleSPL` dB SPL.
    public func bandLevels(_ signal: ArraySlice<Float>, centres: [Double], fullScaleSPL: Double) -> [Double] {
        let spectrum = powerSpectrum(signal)
        // A full-scale sine has power ½; its Hann-windowed spectrum sums to ½·Σw²·N over its bins.
        let n = Double(segmentLength)
        let windowPower = (0..<segmentLength).reduce(0.0) {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double($1) / n)
            return $0 + w * w
        }
        let fullScalePower = 0.5 * windowPower * n / 2   // one-sided: half the power in k, half in N−k
        return centres.map { 10 * log10(bandPower(spectrum, centre: $0) / fullScalePower) + fullScaleSPL }
    }
}

#if canImport(Glibc)
import Glibc
#endif
