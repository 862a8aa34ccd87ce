/// The familiarization that opens a hearing test, with its consistency check, after
/// ISO 8253-1:2010 (pure-tone air conduction audiometry, the familiarization clause) and the
/// British Society of Audiology's Recommended Procedure for pure-tone audiometry (2011/2018),
/// which follows it:
///
/// 1. A tone at the start level (clearly audible for most listeners); while it is not heard the
///    level rises in 20 dB steps up to the maximum.
/// 2. Once heard, the level falls in 20 dB steps until the tone is not heard (or the minimum is
///    reached, which counts as heard there).
/// 3. Then it rises in 10 dB steps until the tone is heard: that level is the response level.
/// 4. The tone is presented once more at the response level. Heard: the listener's answers are
///    consistent with the presentations and the familiarization is done. Missed: the
///    familiarization is repeated once from step 1 at the response level; a second miss means the
///    listener has not understood the task (the standard re-instructs; an automated test cannot,
///    so it goes on and reports the familiarization as inconsistent, which makes the result
///    unreliable).
///
/// The threshold search then starts 10 dB below the response level and ascends in 5 dB steps
/// (ISO 8253-1's ascending method). Two misses at the maximum end it without a response level.
/// A pure state machine on the 5 dB grid: `level` says what to play, `record(heard:)` what happened.
public struct Familiarization: Sendable, Equatable {
    /// How the familiarization ended.
    public enum Outcome: Sendable, Equatable {
        /// Answers consistent with the presentations (on the first or the repeated try).
        case consistent(responseLevel: Double)
        /// Inconsistent twice: the search starts from the last response level anyway.
        case inconsistent(responseLevel: Double)
        /// Not heard at the maximum.
        case noResponse
    }

    public let minimumLevel: Double
    public let maximumLevel: Double
    public private(set) var level: Double
    public private(set) var outcome: Outcome?
    /// Tries so far (1 or 2).
    public private(set) var tries = 1

    private enum Phase: Sendable, Equatable { case rising, falling, ascending, check }
    private var phase = Phase.rising
    private var missesAtMaximum = 0

    public init(startLevel: Double, minimumLevel: Double, maximumLevel: Double) {
        self.minimumLevel = ThresholdSearch.gridUp(minimumLevel)
        self.maximumLevel = max(self.minimumLevel, ThresholdSearch.gridDown(maximumLevel))
        level = min(max(ThresholdSearch.gridUp(startLevel), self.minimumLevel), self.maximumLevel)
    }

    public mutating func record(heard: Bool) {
        guard outcome == nil else { return }
        switch phase {
        case .rising:
            if heard {
                phase = .falling
                fall()
            } else if level >= maximumLevel {
                missesAtMaximum += 1
                if missesAtMaximum >= 2 { outcome = .noResponse }
            } else {
                level = min(level + 20, maximumLevel)
            }
        case .falling:
            if heard {
                fall()
            } else {
                phase = .ascending
                level = min(level + 10, maximumLevel)
            }
        case .ascending:
            if heard {
                phase = .check
            } else if level >= maximumLevel {
                // Heard higher up before, now not even at the maximum: inconsistent.
                inconsistent()
            } else {
                level = min(level + 10, maximumLevel)
            }
        case .check:
            if heard { outcome = .consistent(responseLevel: level) } else { inconsistent() }
        }
    }

    /// Falls 20 dB; at the minimum a response there stands as the response level.
    private mutating func fall() {
        if level <= minimumLevel {
            phase = .check
        } else {
            level = max(level - 20, minimumLevel)
        }
    }

    private mutating func inconsistent() {
        if tries >= 2 {
            outcome = .inconsistent(responseLevel: level)
        } else {
            tries += 1
            phase = .rising
            missesAtMaximum = 0
        }
    }
}
