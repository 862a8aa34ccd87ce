import Foundation
@testable import OSCCore
import Testing

/// Bundle timetags: NTP fixed point, decoded with the bundle, measured against the wall clock,
/// and nested bundles held to the packet's one moment.
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

    @Test("Seconds ahead of the wall clock; none for 'immediately'")
    func secondsAhead() {
        let wall = 1_790_000_000.5
        #expect(abs(OSCTimetag(unixSeconds: wall + 4).secondsAhead(ofWallClock: wall)! - 4) < 1e-6)
        #expect(abs(OSCTimetag(unixSeconds: wall - 2).secondsAhead(ofWallClock: wall)! + 2) < 1e-6)
        #expect(OSCTimetag.immediately.secondsAhead(ofWallClock: wall) == nil)
    }

    @Test("The wall clock read now agrees with the system's")
    func wallClockNow() {
        #expect(abs(OSCTimetag.wallClockNow - Date().timeIntervalSince1970) < 0.05)
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
