#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The only file of SoundFitDSP that imports the C library. The few libm and libc calls the
// kernels need go through these wrappers, so that the real-time code path has one small,
// reviewable list of C functions it relies on. All of them are real-time safe: they neither
// allocate nor lock.

@inline(__always) func libmSin(_ x: Double) -> Double { sin(x) }
@inline(__always) func libmCos(_ x: Double) -> Double { cos(x) }
@inline(__always) func libmTan(_ x: Double) -> Double { tan(x) }
@inline(__always) func libmPow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
@inline(__always) func libmExp(_ x: Double) -> Double { exp(x) }
@inline(__always) func libmLog(_ x: Double) -> Double { log(x) }
@inline(__always) func libmLog10(_ x: Double) -> Double { log10(x) }
@inline(__always) func libmAtan2(_ y: Double, _ x: Double) -> Double { atan2(y, x) }

/// Copies `count` floats; the regions may overlap (memmove).
@inline(__always)
func copyFloats(from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
    guard count > 0, UnsafePointer(destination) != source else { return }
    memmove(destination, source, count * MemoryLayout<Float>.stride)
}
