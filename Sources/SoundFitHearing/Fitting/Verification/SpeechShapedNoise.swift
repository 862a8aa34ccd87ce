/// A stationary noise with the long-term average speech spectrum of Byrne et al. 1994
/// (`SpeechSpectrum`): the stand-in for speech that fittings are verified with (IEC 60118-15
/// uses the ISTS at 55, 65 and 80 dB SPL; an LTASS-shaped noise is the usual substitute).
///
/// Synthesized in the frequency domain: every FFT bin gets the amplitude of the spectrum's
/// density over its width and a random phase (seeded: the same seed gives the same noise), then
/// one inverse FFT. The result is periodic in its length, so it can be looped without a seam,
/// and it is scaled to exactly the requested level: with `fullScaleSPL` dB SPL for a full-scale
/// sine (RMS 1/√2), `level` dB SPL is an RMS of (1/√2)·10^((level − fullScaleSPL)/20).
/// Off the audio thread only: allocates.
public enum SpeechShapedNoise {
    /// `seconds` (rounded up to a power of two of samples) of speech-shaped noise at `level`
    /// dB SPL overall.
    public static func samples(level: Double, fullScaleSPL: Double, sampleRate: Double, seconds: Double,
                               seed: UInt64 = 1994) -> [Float] {
        precondition(sampleRate > 0 && seconds > 0)
        let n = FourierTransform.powerOfTwo(atLeast: Int((seconds * sampleRate).rounded(.up)))
        var random = HearingTestRandom(seed: seed)
        var re = [Double](repeating: 0, count: n), im = re
        let binWidth = sampleRate / Double(n)
        for k in 1..<(n / 2) {
            let density = SpeechSpectrum.spectralDensity(at: Double(k) * binWidth, overall: 0)
            guard density.isFinite else { continue }
            let magnitude = pow(10, density / 20) * binWidth.squareRoot()
            let phase = Double.random(in: 0..<(2 * Double.pi), using: &random)
            re[k] = magnitude * cos(phase)
            im[k] = magnitude * sin(phase)
            re[n - k] = re[k]
            im[n - k] = -im[k]
        }
        FourierTransform.transform(&re, &im)   // a real signal (conjugate-symmetric spectrum)
        let power = re.reduce(0) { $0 + $1 * $1 } / Double(n)
        let targetRMS = pow(10, (level - fullScaleSPL) / 20) / 2.0.squareRoot()
        let scale = targetRMS / power.squareRoot()
        return re.map { Float($0 * scale) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
