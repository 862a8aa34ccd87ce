import Glibc

/// A moment on the audio engine's clock: microseconds of `CLOCK_MONOTONIC_RAW`, the clock JACK's
/// cycle times (`jack_get_time`, `jack_get_cycle_times`) read on Linux. A change scheduled for a
/// moment (an OSC bundle with a future timetag) carries it down to the audio thread, which applies
/// the change at the frame of the cycle that contains it.
///
/// Thread rules: a plain value; `now` reads the clock (vDSO, no lock) and may be called anywhere
/// except the JACK process callback, which gets its cycle's times from JACK.
public struct EngineTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var microseconds: UInt64

    public init(microseconds: UInt64) {
        self.microseconds = microseconds
    }

    /// The engine clock now.
    public static var now: EngineTime {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_RAW, &time)
        return EngineTime(microseconds: UInt64(time.tv_sec) &* 1_000_000 &+ UInt64(time.tv_nsec) / 1000)
    }

    /// This moment moved by `seconds` (negative: earlier; never before the clock's start).
    public func advanced(bySeconds seconds: Double) -> EngineTime {
        let shifted = Double(microseconds) + (seconds * 1e6).rounded()
        return EngineTime(microseconds: shifted <= 0 ? 0 : UInt64(shifted))
    }

    /// Seconds from `other` to this moment (negative when this one is earlier).
    public func seconds(since other: EngineTime) -> Double {
        microseconds >= other.microseconds ? Double(microseconds - other.microseconds) / 1e6
                                            : -Double(other.microseconds - microseconds) / 1e6
    }

    public static func < (lhs: EngineTime, rhs: EngineTime) -> Bool { lhs.microseconds < rhs.microseconds }

    public var description: String { "\(microseconds) µs" }
}
