/// A radix-2 complex FFT for measurements and signal synthesis off the audio thread (it
/// allocates its twiddles): verification of a fitting, speech-shaped noise, the tests.
public enum FourierTransform {
    /// In-place iterative radix-2 complex FFT (forward, e^{−iωt}, unscaled); `re.count` must be a
    /// power of two and equal `im.count`.
    public static func transform(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        precondition(n > 0 && n & (n - 1) == 0 && im.count == n)
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                var j = 0
                for i in 1..<n {
                    var bit = n >> 1
                    while j & bit != 0 { j ^= bit; bit >>= 1 }
                    j |= bit
                    if i < j { re.swapAt(i, j); im.swapAt(i, j) }
                }
                var length = 2
                while length <= n {
                    let angle = -2 * Double.pi / Double(length)
                    let half = length / 2
                    // Twiddles computed directly (not by recurrence) for accuracy.
                    var twRe = [Double](repeating: 0, count: half), twIm = twRe
                    for k in 0..<half { twRe[k] = cos(angle * Double(k)); twIm[k] = sin(angle * Double(k)) }
                    var start = 0
                    while start < n {
                        for k in 0..<half {
                            let a = start + k, b = a + half
                            let tr = re[b] * twRe[k] - im[b] * twIm[k]
                            let ti = re[b] * twIm[k] + im[b] * twRe[k]
                            re[b] = re[a] - tr; im[b] = im[a] - ti
                            re[a] += tr; im[a] += ti
                        }
                        start += length
                    }
                    length <<= 1
                }
            }
        }
    }

    /// The smallest power of two ≥ `count` (≥ 1).
    public static func powerOfTwo(atLeast count: Int) -> Int {
        var n = 1
        while n < count { n <<= 1 }
        return n
    }
}

#if canImport(Glibc)
import Glibc
#endif
