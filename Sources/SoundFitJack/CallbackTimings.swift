import Synchronization

/// A preallocated ring of process-callback durations (nanoseconds of CLOCK_MONOTONIC from entry
/// to exit: the time the cycle took, including any preemption of the audio thread), written by
/// the audio thread and read for `/status` and benchmarks.
/// A `~Copyable` struct stored inline, so the audio thread reaches it without a retain.
struct CallbackTimings: ~Copyable, @unchecked Sendable {
    static let capacity = 8192
    private let samples: UnsafeMutablePointer<UInt32>
    private let written = Atomic<Int>(0)

    init() {
        samples = .allocate(capacity: Self.capacity)
        samples.initialize(repeating: 0, count: Self.capacity)
    }

    deinit { samples.deallocate() }

    /// Real-time safe.
    @inline(__always)
    func record(nanoseconds: UInt64) {
        let index = written.load(ordering: .relaxed)
        samples[index & (Self.capacity - 1)] = UInt32(clamping: nanoseconds)
        written.store(index &+ 1, ordering: .releasing)
    }

    /// The most recent samples (up to the ring's capacity), oldest first. Control thread;
    /// a sample being overwritten during the copy only blurs one statistic.
    func recent() -> [UInt32] {
        let count = min(written.load(ordering: .acquiring), Self.capacity)
        return Array(UnsafeBufferPointer(start: samples, count: count))
    }
}

/// Percentiles of a timing sample, in nanoseconds.
public struct TimingSummary: Sendable, Equatable {
    public var count: Int
    public var p50: Double
    public var p99: Double
    public var p999: Double
    public var maximum: Double

    init(_ samples: [UInt32]) {
        let sorted = samples.sorted()
        count = sorted.count
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return Double(sorted[min(sorted.count - 1, Int(p * Double(sorted.count - 1)))])
        }
        p50 = percentile(0.5)
        p99 = percentile(0.99)
        p999 = percentile(0.999)
        maximum = Double(sorted.last ?? 0)
    }
}
