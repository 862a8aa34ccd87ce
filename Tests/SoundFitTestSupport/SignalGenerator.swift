import Foundation

/// A small deterministic random generator (SplitMix64) so that test signals are the same on
/// every run and machine.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    public mutating func nextBipolar() -> Double {
        Double(next() >> 11) * 0x1p-52 - 1
    }
}

public enum SignalGenerator {
    /// White noise, uniform in `[-amplitude, amplitude)`.
    public static func whiteNoise(count: Int, amplitude: Double = 0.5, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in Float(amplitude * random.nextBipolar()) }
    }

    /// A sum of sines, `amplitude` each, at `frequencies` with seeded random phases.
    /// Computed in float64, rounded once to float32.
    public static func multiTone(frequencies: [Double], amplitude: Double, sampleRate: Double,
                                 count: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        let phases = frequencies.map { _ in Double.pi * random.nextBipolar() }
        var out = [Double](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { buffer in
            for (f, phase) in zip(frequencies, phases) {
                let w = 2 * Double.pi * f / sampleRate
                for n in 0..<count { buffer[n] += amplitude * sin(w * Double(n) + phase) }
            }
        }
        return out.map { Float($0) }
    }

    /// Largest absolute difference between consecutive samples.
    public static func maximumJump(_ samples: [Float]) -> Double {
        var jump = 0.0
        for i in 1..<max(1, samples.count) {
            jump = max(jump, abs(Double(samples[i]) - Double(samples[i - 1])))
        }
        return jump
    }
}
