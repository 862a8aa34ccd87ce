import Foundation
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// Bundle timetags: NTP fixed point, decoded with the bundle, mapped from the wall clock onto
/// the engine clock, and nested bundles held to the packet's one moment.
@Suite struct OSCTimetagTests {
    /// `#bundle`, an 8-byte timetag, then each element with its size.
    static func bundle(timetag: UInt64, _ elements: [[UInt8]]) -> [UInt8] {
        var bytes = Array("#bundle".utf8) + [0]
        bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: timetag >> (8 * $0)) }
        for element in elements {
            bytes += (0..<4).reversed().map { UInt8(truncatingIfNeeded: UInt32(element.count) >> (8 * $0)) }
            bytes += element
        }
        return bytes
    }

    static let gain = OSCCodec.encode(OSCMessage("/output/gain", [.float(-6)]))

    @Test("NTP fixed point ↔ seconds since 1970")
    func ntpConversion() {
        let timetag = OSCTimetag(unixSeconds: 1_700_000_000.25)
        #expect(timetag.rawValue >> 32 == 1_700_000_000 + 2_208_988_800)
        #expect(timetag.rawValue & 0xFFFF_FFFF == 1 << 30)
        #expect(abs(timetag.unixSeconds - 1_700_000_000.25) < 1e-6)
        #expect(OSCTimetag(rawValue: 1).isImmediate && OSCTimetag.immediately.rawValue == 1)
        #expect(!OSCTimetag(rawValue: 0).isImmediate)
    }

    @Test("A timetag maps onto the engine clock at its distance from the wall clock")
    func mappingOntoTheEngineClock() throws {
        let wall = 1_790_000_000.5
        let engine = EngineTime(microseconds: 5_000_000_000)
        let ahead = try #require(OSCTimetag(unixSeconds: wall + 0.3).engineTime(wallClockNow: wall, engineNow: engine))
        #expect(abs(Int64(ahead.microseconds) - 5_000_300_000) <= 1, "\(ahead)")
        let past = try #require(OSCTimetag(unixSeconds: wall - 2).engineTime(wallClockNow: wall, engineNow: engine))
        #expect(abs(Int64(past.microseconds) - 4_998_000_000) <= 1, "\(past)")
        #expect(OSCTimetag.immediately.engineTime(wallClockNow: wall, engineNow: engine) == nil)
        #expect(abs(OSCTimetag(unixSeconds: wall + 4).secondsAhead(ofWallClock: wall)! - 4) < 1e-6)
    }

    @Test("The clocks read now agree with the system's: wall clock and CLOCK_MONOTONIC_RAW")
    func clocksNow() {
        let wall = OSCTimetag.wallClockNow
        #expect(abs(wall - Date().timeIntervalSince1970) < 0.05)
        let first = EngineTime.now
        Thread.sleep(forTimeInterval: 0.02)
        let elapsed = EngineTime.now.seconds(since: first)
        #expect(elapsed >= 0.019 && elapsed < 0.5, "\(elapsed)")
    }

    @Test("A decoded bundle carries its timetag; a message is immediate")
    func decodedBundleCarriesItsTimetag() throws {
        let raw: UInt64 = 0xE5F0_1234_8000_0000
        let packet = try OSCCodec.decode(Self.bundle(timetag: raw, [Self.gain]))
        #expect(packet == .bundle(OSCTimetag(rawValue: raw), [.message(OSCMessage("/output/gain", [.float(-6)]))]))
        #expect(packet.timetag == OSCTimetag(rawValue: raw))
        #expect(packet.messages.count == 1)
        #expect(try OSCCodec.decode(Self.gain).timetag.isImmediate)
    }

    @Test("Nested bundles: the same timetag or 'immediately' fits the packet's moment; any other is a problem")
    func nestedTimetags() throws {
        let outer: UInt64 = 0xE5F0_1234_0000_0000
        for (inner, fits) in [(outer, true), (UInt64(1), true), (outer - 1, false), (outer + (1 << 32), false)] {
            let packet = try OSCCodec.decode(Self.bundle(timetag: outer, [Self.bundle(timetag: inner, [Self.gain])]))
            #expect((packet.nestedTimetagProblem == nil) == fits, "inner \(inner): \(packet.nestedTimetagProblem ?? "fits")")
            #expect(packet.timetag.rawValue == outer)
        }
        // Deeper: the innermost is held to the outermost's moment too.
        let deep = try OSCCodec.decode(Self.bundle(timetag: outer, [
            Self.bundle(timetag: 1, [Self.bundle(timetag: outer + 5, [Self.gain])]),
        ]))
        #expect(deep.nestedTimetagProblem != nil)
    }
}
