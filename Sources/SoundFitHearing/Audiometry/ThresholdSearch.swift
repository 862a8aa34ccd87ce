/// The threshold search at one frequency of one ear: the modified Hughson-Westlake rule of
/// ISO 8253-1 / ASHA (2005).
///
/// - Familiarization: the first tone is played at a clearly audible start level; while it is
///   not heard the level rises by 20 dB (up to the maximum).
/// - Then after each response the level falls 10 dB, after each miss it rises 5 dB.
/// - A presentation reached by rising (after a miss) is *ascending*. The threshold is the first
///   level heard on 2 of at most 3 ascending presentations there; it is always a level that was
///   presented, never an interpolation. At the minimum level every presentation counts as
///   ascending (the level cannot fall further).
/// - Two misses at the maximum level end the search with "no response at the maximum".
/// - A search that has not settled after `maximumPresentations` takes the lowest level heard on
///   at least half of its ascending presentations (and at least once), else "no response".
///
/// A pure state machine: `level` says what to play next, `record(heard:)` what happened.
public struct ThresholdSearch: Sendable, Equatable {
    /// How a search ended.
    public enum Outcome: Sendable, Equatable {
        /// The threshold in dB HL.
        case threshold(Double)
        /// Not heard at the maximum level.
        case noResponse
    }

    public static let defaultMaximumPresentations = 30

    public let minimumLevel: Double
    public let maximumLevel: Double
    public let maximumPresentations: Int
    /// The level of the next presentation (dB HL).
    public private(set) var level: Double
    /// Set when the search has ended.
    public private(set) var outcome: Outcome?
    /// Presentations so far.
    public private(set) var presentations = 0

    private var familiarizing = true
    private var nextIsAscending = false
    private var missesAtMaximum = 0
    /// Ascending presentations per level (in tenths of a dB, so levels compare exactly).
    private var ascending: [Int: Tally] = [:]

    private struct Tally: Sendable, Equatable {
        var presented = 0
        var heard = 0
        /// Heard among the first three presentations.
        var heardOfFirstThree = 0
    }

    public init(startLevel: Double, minimumLevel: Double = -10, maximumLevel: Double,
                maximumPresentations: Int = defaultMaximumPresentations) {
        precondition(minimumLevel <= maximumLevel && maximumPresentations > 0)
        self.minimumLevel = minimumLevel
        self.maximumLevel = maximumLevel
        self.maximumPresentations = maximumPresentations
        level = min(max(startLevel, minimumLevel), maximumLevel)
    }

    /// Records whether the tone at `level` was heard and chooses the next level.
    public mutating func record(heard: Bool) {
        guard outcome == nil else { return }
        presentations += 1
        if familiarizing {
            if heard {
                familiarizing = false
                descend()
            } else {
                missed()
                if outcome == nil { level = min(level + 20, maximumLevel) }
            }
        } else {
            if nextIsAscending || level <= minimumLevel {
                let key = Self.key(level)
                var tally = ascending[key, default: Tally()]
                tally.presented += 1
                if heard {
                    tally.heard += 1
                    if tally.presented <= 3 { tally.heardOfFirstThree += 1 }
                }
                ascending[key] = tally
                if heard && tally.heardOfFirstThree >= 2 {
                    outcome = .threshold(level)
                    return
                }
            }
            if heard {
                descend()
            } else {
                missed()
                if outcome == nil {
                    level = min(level + 5, maximumLevel)
                    nextIsAscending = true
                }
            }
        }
        if outcome == nil && presentations >= maximumPresentations { settleUnfinished() }
    }

    private mutating func descend() {
        level = max(level - 10, minimumLevel)
        nextIsAscending = false
    }

    private mutating func missed() {
        guard level >= maximumLevel else { return }
        missesAtMaximum += 1
        if missesAtMaximum >= 2 { outcome = .noResponse }
    }

    private mutating func settleUnfinished() {
        let candidates = ascending.filter { $0.value.heard >= 1 && 2 * $0.value.heard >= $0.value.presented }
        outcome = candidates.keys.min().map { .threshold(Double($0) / 10) } ?? .noResponse
    }

    private static func key(_ level: Double) -> Int { Int((level * 10).rounded()) }
}
