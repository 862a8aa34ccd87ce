// Small vector loops shared by the kernels. Real-time safe: no allocation, no locks.
// Loads and stores are unaligned SIMD8 accesses (JACK buffers are 16-byte aligned, but the
// kernels also process sub-ranges that start anywhere).

/// `buffer[i] *= factor` for `i` in `0..<count`.
@inline(__always)
func scaleInPlace(_ buffer: UnsafeMutablePointer<Float>, count: Int, by factor: Float) {
    let raw = UnsafeMutableRawPointer(buffer)
    let stride = MemoryLayout<Float>.stride
    var i = 0
    while i &+ 8 <= count {
        let v = raw.loadUnaligned(fromByteOffset: i &* stride, as: SIMD8<Float>.self) * factor
        raw.storeBytes(of: v, toByteOffset: i &* stride, as: SIMD8<Float>.self)
        i &+= 8
    }
    while i < count {
        buffer[i] *= factor
        i &+= 1
    }
}

/// `buffer[i] *= factors[i]` for `i` in `0..<count`. `factors` must not overlap `buffer`.
@inline(__always)
func multiplyInPlace(_ buffer: UnsafeMutablePointer<Float>, by factors: UnsafePointer<Float>, count: Int) {
    let raw = UnsafeMutableRawPointer(buffer)
    let rawFactors = UnsafeRawPointer(factors)
    let stride = MemoryLayout<Float>.stride
    var i = 0
    while i &+ 8 <= count {
        let offset = i &* stride
        let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            * rawFactors.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        raw.storeBytes(of: v, toByteOffset: offset, as: SIMD8<Float>.self)
        i &+= 8
    }
    while i < count {
        buffer[i] *= factors[i]
        i &+= 1
    }
}

/// `buffer[i] = 1 + fade[i] * (buffer[i] - 1)`: blends a per-sample gain with unity, the
/// cross-fade between an enabled and a bypassed gain stage.
@inline(__always)
func blendTowardUnity(_ buffer: UnsafeMutablePointer<Float>, fade: UnsafePointer<Float>, count: Int) {
    for i in 0..<count {
        buffer[i] = 1 + fade[i] * (buffer[i] - 1)
    }
}

/// Whether any of `buffer[0..<count]` lies outside `-limit...limit` (a NaN does not count).
/// Branch-free, so the compiler vectorizes it: one pass over a block that needs no limiting.
@inline(__always)
func anyMagnitudeAbove(_ limit: Float, _ buffer: UnsafePointer<Float>, count: Int) -> Bool {
    var above: UInt32 = 0
    for i in 0..<count {
        let x = buffer[i]
        above |= (x > limit ? 1 : 0) | (x < -limit ? 1 : 0)
    }
    return above != 0
}
