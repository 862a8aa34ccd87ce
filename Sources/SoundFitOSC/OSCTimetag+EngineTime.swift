import OSCCore
import SoundFitModel

/// Here, not in OSCCore: the engine clock is SoundFit's, and OSCCore imports nothing of SoundFit.
extension OSCTimetag {
    /// The moment on the engine clock that this timetag names, given the wall clock and the
    /// engine clock read at the same instant: the timetag's distance from the wall clock, laid
    /// onto the engine clock. (Both clocks run at the same rate to within the system's clock
    /// discipline, tens of ppm: well under a frame over the scheduling horizon.) Nil for
    /// "immediately".
    public func engineTime(wallClockNow: Double, engineNow: EngineTime) -> EngineTime? {
        secondsAhead(ofWallClock: wallClockNow).map { engineNow.advanced(bySeconds: $0) }
    }
}
