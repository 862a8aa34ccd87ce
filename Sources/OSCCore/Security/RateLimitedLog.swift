import Synchronization

/// Log lines for events a sender can cause at any rate (packets from outside `--osc-allow`,
/// oversized packets, undecodable packets): at most `limit` lines per key in each `interval`,
/// the rest counted and reported as "(n more suppressed)". Keys say what is limited together,
/// e.g. the reason and the sender's host.
///
/// Thread rules: `log` and `flushSuppressed` may be called from any thread except the JACK
/// process callback; the lock covers only the limiter's bookkeeping, lines are built and
/// emitted outside it, and only when written.
public final class RateLimitedLog<Key: Hashable & Sendable & CustomStringConvertible>: Sendable {
    private let limiter: Mutex<LogRateLimiter<Key>>
    private let now: @Sendable () -> Duration
    private let emit: @Sendable (String) -> Void

    /// - Parameters:
    ///   - now: time since any fixed origin; tests pass a manual time.
    ///   - emit: writes one line, e.g. `{ logger.warning("\($0)") }`.
    public init(limit: Int = 5, per interval: Duration = .seconds(10), maximumKeys: Int = 256,
                now: @escaping @Sendable () -> Duration, emit: @escaping @Sendable (String) -> Void) {
        limiter = Mutex(LogRateLimiter(limit: limit, interval: interval, maximumKeys: maximumKeys))
        self.now = now
        self.emit = emit
    }

    /// Times from `clock` (a `ContinuousClock` by default).
    public convenience init<C: Clock<Duration>>(limit: Int = 5, per interval: Duration = .seconds(10),
                                                maximumKeys: Int = 256, clock: C = ContinuousClock(),
                                                emit: @escaping @Sendable (String) -> Void) {
        let origin = clock.now
        self.init(limit: limit, per: interval, maximumKeys: maximumKeys,
                  now: { origin.duration(to: clock.now) }, emit: emit)
    }

    /// Writes `line` unless its key has used up its lines in the current interval. Counts of
    /// lines held back in ended windows of other keys are written first.
    public func log(_ key: Key, _ line: @autoclosure () -> String) {
        let time = now()
        let (decision, ended) = limiter.withLock { limiter in
            (limiter.admit(key, at: time), limiter.sweepIfDue(at: time))
        }
        for report in ended { emit(Self.line(for: report)) }
        switch decision {
        case .log(let suppressed) where suppressed > 0: emit("\(line()) (\(suppressed) more suppressed)")
        case .log: emit(line())
        case .suppress: break
        }
    }

    /// Writes the counts of lines held back in windows that have ended (call it from a
    /// periodic task so a flood that stopped is still accounted for).
    public func flushSuppressed() {
        let time = now()
        let ended = limiter.withLock { $0.sweep(at: time) }
        for report in ended { emit(Self.line(for: report)) }
    }

    static func line(for report: LogRateLimiter<Key>.Suppressed) -> String {
        "\(report.key.map(\.description) ?? "other sources"): \(report.count) more suppressed"
    }
}
