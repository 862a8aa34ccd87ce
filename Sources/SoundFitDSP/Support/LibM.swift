#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The only file of SoundFitDSP that imports the C library. The few libm and libc calls the
// kernels need go through these wrappers, so that the real-time code path has one small,
// reviewable list of C functions it relies on. All of them are real-time safe: they neither
// allocate nor lock. They are marked `no_performance_analysis` (the compiler cannot see into C
// bodies) and not inlined, so that `@_noLocks` checks (RealtimeSafetyCheck.swift) trust them.

@_semantics("no_performance_analysis") @inline(never) func libmSin(_ x: Double) -> Double { sin(x) }
@_semantics("no_performance_analysis") @inline(never) func libmCos(_ x: Double) -> Double { cos(x) }
@_semantics("no_performance_analysis") @inline(never) func libmTan(_ x: Double) -> Double { tan(x) }
@_semantics("no_performance_analysis") @inline(never) func libmPow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
@_semantics("no_performance_analysis") @inline(never) func libmExp(_ x: Double) -> Double { exp(x) }
@_semantics("no_performance_analysis") @inline(never) func libmLog(_ x: Double) -> Double { log(x) }
@_semantics("no_performance_analysis") @inline(never) func libmLog10(_ x: Double) -> Double { log10(x) }
@_semantics("no_performance_analysis") @inline(never) func libmSqrt(_ x: Double) -> Double { x.squareRoot() }
@_semantics("no_performance_analysis") @inline(never) func libmAtan2(_ y: Double, _ x: Double) -> Double { atan2(y, x) }

/// Copies `count` floats; the regions may overlap (memmove).
@_semantics("no_performance_analysis") @inline(never)
func copyFloats(from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
    guard count > 0, UnsafePointer(destination) != source else { return }
    memmove(destination, source, count * MemoryLayout<Float>.stride)
}

/// The value of the environment variable `name`, or nil. Set-up only (not real-time).
func libcEnvironment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}
