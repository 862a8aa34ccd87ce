/// When the durable store writes: `quietPeriod` after the last change, but no later than
/// `maximumDelay` after the first change not yet written, so a constant stream of changes
/// (a fader being moved) is still saved about once per `maximumDelay`.
///
/// A plain state machine over times (offsets from the store's start); the store runs it.
struct PersistenceSchedule: Sendable, Equatable {
    let quietPeriod: Duration
    let maximumDelay: Duration
    /// The first change not yet written.
    private(set) var firstChange: Duration?
    /// The latest change.
    private(set) var lastChange: Duration?

    init(quietPeriod: Duration, maximumDelay: Duration) {
        self.quietPeriod = quietPeriod
        self.maximumDelay = max(quietPeriod, maximumDelay)
    }

    /// A change at `now`.
    mutating func changed(at now: Duration) {
        if firstChange == nil { firstChange = now }
        lastChange = now
    }

    /// When the pending change is due to be written, or nil with nothing pending.
    var deadline: Duration? {
        guard let firstChange, let lastChange else { return nil }
        return min(lastChange + quietPeriod, firstChange + maximumDelay)
    }

    /// Whether a write is due at `now`.
    func isDue(at now: Duration) -> Bool {
        deadline.map { $0 <= now } ?? false
    }

    /// The pending change is being written.
    mutating func taken() {
        firstChange = nil
        lastChange = nil
    }
}
