import Foundation

/// An independent float64 model of the personalization crossover tree, written for the tests from
/// its definition (it does not use SoundFitDSP's filters): bands `[lo, hi)` split at the crossover
/// between `mid − 1` and `mid` (`mid = (lo + hi)/2`) into LR4 low (two cookbook Butterworth
/// low-passes, Q = 1/√2) and LR4 high (two high-passes); the low part then passes the cookbook
/// all-pass (Q = 1/√2) of every crossover inside the high part and vice versa; recursively.
/// Direct form I in float64.
public enum CrossoverTreeReference {
    /// The band signals of `input` for the given crossovers (band count = crossovers + 1).
    public static func bands(of input: [Float], crossovers: [Double], sampleRate: Double) -> [[Double]] {
        var result = [[Double]](repeating: [], count: crossovers.count + 1)
        func run(_ kind: CookbookBiquad.Kind, _ fc: Double, _ x: [Double]) -> [Double] {
            let c = CookbookBiquad(kind: kind, f0: fc, q: 1 / 2.0.squareRoot(), dbGain: 0, fs: sampleRate).normalized
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            return x.map { s in
                let y = c.b0 * s + c.b1 * x1 + c.b2 * x2 - c.a1 * y1 - c.a2 * y2
                x2 = x1; x1 = s; y2 = y1; y1 = y
                return y
            }
        }
        func split(_ lo: Int, _ hi: Int, _ x: [Double]) {
            if hi - lo == 1 {
                result[lo] = x
                return
            }
            let mid = (lo + hi) / 2
            let fc = crossovers[mid - 1]
            var low = run(.lpf, fc, run(.lpf, fc, x))
            var high = run(.hpf, fc, run(.hpf, fc, x))
            for c in mid..<(hi - 1) { low = run(.apf, crossovers[c], low) }
            for c in lo..<max(lo, mid - 1) { high = run(.apf, crossovers[c], high) }
            split(lo, mid, low)
            split(mid, hi, high)
        }
        split(0, crossovers.count + 1, input.map(Double.init))
        return result
    }
}
