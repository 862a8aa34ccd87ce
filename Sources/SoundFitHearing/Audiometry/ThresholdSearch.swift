/// The threshold search at one frequency of one ear: the modified Hughson-Westlake rule of
/// ISO 8253-1 / ASHA (2005).
///
/// - Every level is on the 5 dB grid of ISO 8253-1: the start and minimum are rounded up to it,
///   the maximum is rounded *down* (a level the output cannot reach is never presented).
/// - First tone: played at the start level; while it is not heard the level rises by
///   `firstStep` dB (20 dB from a clearly audible start; 5 dB for the ascending start of
///   ISO 8253-1 10 dB below the familiarization's response), up to the maximum.
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
    /// The audiometer's level grid (dB), ISO 8253-1.
    public static let grid = 5.0

    public let minimumLevel: Double
    public let maximumLevel: Double
    public let maximumPresentations: Int
    /// How far the level rises after a miss before the first response (dB).
    public let firstStep: Double
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
                maximumPresentations: Int = defaultMaximumPresentations, firstStep: Double = 20) {
        let minimum = Self.gridUp(minimumLevel)
        let maximum = max(minimum, Self.gridDown(maximumLevel))
        precondition(maximumPresentations > 0 && firstStep > 0)
        self.minimumLevel = minimum
        self.maximumLevel = maximum
        self.maximumPresentations = maximumPresentations
        self.firstStep = Self.gridUp(firstStep)
        level = min(max(Self.gridUp(startLevel), minimum), maximum)
    }

    /// `level` rounded down to the 5 dB grid (the highest grid level not above it).
    public static func gridDown(_ level: Double) -> Double { (level / grid + 1e-9).rounded(.down) * grid }

    /// `level` rounded up to the 5 dB grid.
    public static func gridUp(_ level: Double) -> Double { (level / grid - 1e-9).rounded(.up) * grid }

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
                if outcome == nil { level = min(level + firstStep, maximumLevel) }
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
