import Foundation
import OSCCore
import SoundFitModel
import SoundFitOSC
import Testing

/// A bundle's timetag laid onto the engine clock (SoundFit's side of `OSCTimetag`).
@Suite struct TimetagOnEngineClockTests {
    @Test("A timetag maps onto the engine clock at its distance from the wall clock")
    func mappingOntoTheEngineClock() throws {
        let wall = 1_790_000_000.5
        let engine = EngineTime(microseconds: 5_000_000_000)
        let ahead = try #require(OSCTimetag(unixSeconds: wall + 0.3).engineTime(wallClockNow: wall, engineNow: engine))
        #expect(abs(Int64(ahead.microseconds) - 5_000_300_000) <= 1, "\(ahead)")
        let past = try #require(OSCTimetag(unixSeconds: wall - 2).engineTime(wallClockNow: wall, engineNow: engine))
        #expect(abs(Int64(past.microseconds) - 4_998_000_000) <= 1, "\(past)")
        #expect(OSCTimetag.immediately.engineTime(wallClockNow: wall, engineNow: engine) == nil)
    }

    @Test("The engine clock read now agrees with CLOCK_MONOTONIC_RAW")
    func engineClockNow() {
        let first = EngineTime.now
        Thread.sleep(forTimeInterval: 0.02)
        let elapsed = EngineTime.now.seconds(since: first)
        #expect(elapsed >= 0.019 && elapsed < 0.5, "\(elapsed)")
    }
}
