import CRealtimeSupport
import Foundation

/// Monotonic wall clock (CLOCK_MONOTONIC), in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 { soundfit_monotonic_time_ns() }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Non-interleaved float buffers with channel-pointer arrays, like JACK port buffers.
final class PlanarBuffers {
    let channelCount: Int
    let frameCount: Int
    private let storage: UnsafeMutablePointer<Float>
    private let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let constPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let offsetPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let offsetConstPointers: UnsafeMutablePointer<UnsafePointer<Float>>

    init(channelCount: Int, frameCount: Int) {
        self.channelCount = channelCount
        self.frameCount = frameCount
        // 64-byte aligned channels, like JACK's.
        let stride = (frameCount + 15) / 16 * 16
        let raw = UnsafeMutableRawPointer.allocate(byteCount: channelCount * stride * 4, alignment: 64)
        storage = raw.bindMemory(to: Float.self, capacity: channelCount * stride)
        storage.initialize(repeating: 0, count: channelCount * stride)
        pointers = .allocate(capacity: channelCount)
        constPointers = .allocate(capacity: channelCount)
        offsetPointers = .allocate(capacity: channelCount)
        offsetConstPointers = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            pointers[c] = storage + c * stride
            constPointers[c] = UnsafePointer(pointers[c])
            offsetPointers[c] = pointers[c]
            offsetConstPointers[c] = constPointers[c]
        }
    }

    deinit {
        storage.deallocate()
        pointers.deallocate()
        constPointers.deallocate()
        offsetPointers.deallocate()
        offsetConstPointers.deallocate()
    }

    var mutableChannels: UnsafePointer<UnsafeMutablePointer<Float>> { UnsafePointer(pointers) }

    /// Mutable channel pointers starting at frame `offset`.
    func channels(offset: Int) -> UnsafePointer<UnsafeMutablePointer<Float>> {
        for c in 0..<channelCount { offsetPointers[c] = pointers[c] + offset }
        return UnsafePointer(offsetPointers)
    }

    /// Read-only channel pointers starting at frame `offset`.
    func inputs(offset: Int) -> UnsafePointer<UnsafePointer<Float>> {
        for c in 0..<channelCount { offsetConstPointers[c] = constPointers[c] + offset }
        return UnsafePointer(offsetConstPointers)
    }

    /// Fills every channel with uniform noise in ±0.5 (deterministic).
    func fillNoise(seed: UInt64) {
        var state = seed
        for c in 0..<channelCount {
            for i in 0..<frameCount {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                pointers[c][i] = Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max) * 0.5
            }
        }
    }

    func copy(from other: PlanarBuffers) {
        for c in 0..<channelCount { pointers[c].update(from: other.pointers[c], count: frameCount) }
    }

    /// A sum over all samples, so the optimizer cannot drop the work.
    var checksum: Double {
        var sum = 0.0
        for c in 0..<channelCount { for i in 0..<frameCount { sum += Double(pointers[c][i]) } }
        return sum
    }
}

/// What the machine is, for the report.
enum MachineInfo {
    static var processorCount: Int { ProcessInfo.processInfo.activeProcessorCount }

    static var cpuModel: String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        }
        return "unknown"
    }

    static var swiftBuild: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }
}
