import Foundation
import SoundFitHearing

/// Spectral measurements (windowed FFT, exact-bin tone analysis) for the DSP tests.
public enum Spectrum {
    /// In-place iterative radix-2 complex FFT; `re.count` must be a power of two.
    public static func fft(_ re: inout [Double], _ im: inout [Double]) {
        FourierTransform.transform(&re, &im)
    }

    /// Kaiser window of `count` points; `beta = 20` puts the side lobes near −190 dB, far below
    /// any level these tests measure.
    public static func kaiserWindow(count: Int, beta: Double = 20) -> [Double] {
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            repeat {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            } while term > sum * 1e-17
            return sum
        }
        let denominator = besselI0(beta)
        guard count > 1 else { return [1] }
        return (0..<count).map { n in
            let r = 2 * Double(n) / Double(count - 1) - 1
            return besselI0(beta * (1 - r * r).squareRoot()) / denominator
        }
    }

    /// Power spectrum (|X_k|², k = 0...N/2) of `samples` under a Kaiser window, zero-padded to a
    /// power of two of at least twice the length. Returns the powers and the bin width in Hz.
    public static func powerSpectrum(_ samples: [Float], sampleRate: Double) -> (power: [Double], binWidth: Double) {
        var n = 1
        while n < 2 * samples.count { n <<= 1 }
        let window = kaiserWindow(count: samples.count)
        var re = [Double](repeating: 0, count: n), im = re
        for i in 0..<samples.count { re[i] = Double(samples[i]) * window[i] }
        fft(&re, &im)
        let power = (0...(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }
        return (power, sampleRate / Double(n))
    }

    /// Amplitude of the DFT of `samples` at `frequency` (Goertzel), normalized so that a sine of
    /// amplitude A spanning a whole number of periods over the window measures A.
    public static func toneAmplitude(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let coefficient = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        samples.withUnsafeBufferPointer { buffer in
            for x in buffer {
                let s = Double(x) + coefficient * s1 - s2
                s2 = s1
                s1 = s
            }
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        return 2 * max(0, power).squareRoot() / Double(samples.count)
    }
}

extension Measurement {
    /// Zipper noise: the energy of `signal` in `band`
    /// (default 2–20 kHz) relative to the energy of the tone (within ±500 Hz of
    /// `toneFrequency`), in dB, from a Kaiser-windowed FFT of the whole signal.
    ///
    /// Feed it the output captured while a parameter moves under a steady tone (the method's
    /// reference case: a 1 kHz sine while a gain ramps by 12 dB over 100 ms). Stepping a gain
    /// once per 64-sample block measures about −50 dB; per-sample smoothing below −90 dB.
    public static func zipperNoiseDecibels(_ signal: [Float], sampleRate: Double, toneFrequency: Double = 1000,
                                           band: ClosedRange<Double> = 2000...20000) -> Double {
        let (power, binWidth) = Spectrum.powerSpectrum(signal, sampleRate: sampleRate)
        var tone = 0.0, noise = 0.0
        for (k, p) in power.enumerated() {
            let f = Double(k) * binWidth
            if abs(f - toneFrequency) <= 500 { tone += p }
            if band.contains(f) && f < sampleRate / 2 { noise += p }
        }
        return 10 * log10(noise / tone)
    }
}
