/// Decides which log lines of a flood are written: per key, at most `limit` lines in each
/// `interval`-long window, and a count of the rest, reported with the next line written for
/// the key ("(n more suppressed)") or by `sweep` once the window has ended.
///
/// A pure state machine over plain `Duration` times (time since some origin), so tests run
/// on made-up times. Memory is bounded: at most `maximumKeys` keys are tracked; when that many
/// are active at once, further keys share one window (reported with a nil key).
public struct LogRateLimiter<Key: Hashable & Sendable>: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Write the line; `suppressed` lines of its key were held back since the last one written.
        case log(suppressed: Int)
        /// Hold the line back (it is counted).
        case suppress
    }

    /// Lines held back in a window that ended without another line being written.
    public struct Suppressed: Equatable, Sendable {
        /// nil for keys that shared the overflow window.
        public var key: Key?
        public var count: Int

        public init(key: Key?, count: Int) {
            self.key = key
            self.count = count
        }
    }

    struct Window: Sendable {
        var start: Duration
        var logged: Int
        var suppressed: Int
    }

    public let limit: Int
    public let interval: Duration
    public let maximumKeys: Int
    private var windows: [Key: Window] = [:]
    private var overflow: Window?
    private var lastSweep: Duration?

    public init(limit: Int, interval: Duration, maximumKeys: Int = 256) {
        precondition(limit > 0 && interval > .zero && maximumKeys > 0)
        self.limit = limit
        self.interval = interval
        self.maximumKeys = maximumKeys
    }

    /// Whether a line for `key` at time `now` is written.
    public mutating func admit(_ key: Key, at now: Duration) -> Decision {
        if var window = windows[key] {
            let decision = advance(&window, at: now)
            windows[key] = window
            return decision
        }
        if windows.count >= maximumKeys {
            // Forget ended windows with nothing to report; the key starts afresh next time anyway.
            windows = windows.filter { now - $0.value.start < interval || $0.value.suppressed > 0 }
        }
        if windows.count < maximumKeys {
            windows[key] = Window(start: now, logged: 1, suppressed: 0)
            return .log(suppressed: 0)
        }
        var window = overflow ?? Window(start: now, logged: 0, suppressed: 0)
        let decision = advance(&window, at: now)
        overflow = window
        return decision
    }

    /// Ends every window that is over: returns the ones that held lines back (in no particular
    /// order of keys, the overflow last) and forgets them all.
    public mutating func sweep(at now: Duration) -> [Suppressed] {
        lastSweep = now
        var reports: [Suppressed] = []
        for (key, window) in windows where now - window.start >= interval {
            if window.suppressed > 0 { reports.append(Suppressed(key: key, count: window.suppressed)) }
            windows[key] = nil
        }
        if let window = overflow, now - window.start >= interval {
            if window.suppressed > 0 { reports.append(Suppressed(key: nil, count: window.suppressed)) }
            overflow = nil
        }
        return reports
    }

    /// `sweep(at:)`, but only once per interval; cheap to call with every line.
    public mutating func sweepIfDue(at now: Duration) -> [Suppressed] {
        if let lastSweep, now - lastSweep < interval { return [] }
        return sweep(at: now)
    }

    /// Lines of `key` held back in its current window.
    public func suppressedCount(for key: Key) -> Int { windows[key]?.suppressed ?? 0 }

    /// Keys with a window (bounded by `maximumKeys`).
    public var trackedKeyCount: Int { windows.count }

    private func advance(_ window: inout Window, at now: Duration) -> Decision {
        if now - window.start >= interval {
            let suppressed = window.suppressed
            window = Window(start: now, logged: 1, suppressed: 0)
            return .log(suppressed: suppressed)
        }
        if window.logged < limit {
            window.logged += 1
            return .log(suppressed: 0)
        }
        window.suppressed += 1
        return .suppress
    }
}
