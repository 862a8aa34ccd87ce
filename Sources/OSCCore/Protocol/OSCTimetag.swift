import Glibc

// Why not liblo: lo_timetag knows no Unix time (only lo_timetag_diff) and lo_timetag_now reads gettimeofday.
/// An OSC bundle's timetag: NTP 64-bit fixed point, seconds since 1900-01-01 UTC in the high
/// 32 bits and the fraction of a second in the low 32; the value 1 means "immediately".
/// (NTP era 0 only: timetags up to February 2036.)
public struct OSCTimetag: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// "Immediately" (OSC 1.0: the 64-bit value 1).
    public static let immediately = OSCTimetag(rawValue: 1)

    public var isImmediate: Bool { rawValue == 1 }

    /// Seconds from the NTP epoch (1900) to the Unix epoch (1970).
    static let unixEpochOffset = 2_208_988_800.0

    /// The timetag of a wall-clock moment, in seconds since 1970.
    public init(unixSeconds: Double) {
        let ntp = unixSeconds + Self.unixEpochOffset
        let seconds = ntp.rounded(.down)
        let fraction = ((ntp - seconds) * 4_294_967_296).rounded()
        rawValue = UInt64(seconds) << 32 &+ UInt64(min(fraction, 4_294_967_295))
    }

    /// The wall-clock moment, in seconds since 1970.
    public var unixSeconds: Double {
        Double(rawValue >> 32) - Self.unixEpochOffset + Double(rawValue & 0xFFFF_FFFF) / 4_294_967_296
    }

    /// The wall clock (`CLOCK_REALTIME`) now, in seconds since 1970.
    public static var wallClockNow: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds from `wallClockNow` (seconds since 1970) until this timetag: negative when it is
    /// past, nil for "immediately".
    public func secondsAhead(ofWallClock wallClockNow: Double) -> Double? {
        isImmediate ? nil : unixSeconds - wallClockNow
    }

    public var description: String {
        isImmediate ? "immediately" : "\(rawValue >> 32).\(rawValue & 0xFFFF_FFFF) (NTP)"
    }
}
