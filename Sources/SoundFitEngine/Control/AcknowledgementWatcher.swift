import Foundation
import Synchronization

/// Waits for the audio thread's acknowledgements without the audio thread waking anyone:
/// while someone waits, a control-side thread polls the mailbox (it stops polling 20 ms after
/// the last waiter left, so an idle SoundFit costs nothing here). It polls twice per audio cycle, the period
/// estimated from the cycle counter (every 250 µs until it knows, never more often, never less
/// often than every 1 ms): an acknowledgement cannot come faster than the cycle that makes it,
/// so a faster poll only burns CPU (at 1 000 sets per second a 250 µs poll was the largest
/// share of the control side's CPU). A plain thread sleeping in `nanosleep` wakes
/// once per poll; a `Task.sleep` poll cost a timer on the dispatch manager thread and a hop
/// to a worker thread besides.
///
/// Each target is resolved exactly from the parameter's pickup history
/// (`EngineMailbox.acknowledgement(of:index:)`), so several values of one parameter can be in
/// flight: each ends applied in the cycle that took it, or superseded when the audio thread
/// went from an older value straight to a newer one. Only a watcher that fell more than
/// `RealtimeMailbox.historyDepth` pickups behind (starved for several cycles) cannot tell; it then
/// counts the target as applied by the later value that is known to have taken its place —
/// the rule that was exact while one value at a time was in flight.
///
/// Preset hand-overs wait here too (`wait(until:timeout:)`), on their own acknowledgement words.
final class AcknowledgementWatcher: Sendable {
    private struct Waiter {
        /// The outcome once the audio thread acknowledged what is waited for, else nil.
        var resolve: @Sendable () -> Result<UInt32, any Error>?
        /// The sequence published last among the targets (a batch is published in order); 0
        /// for other acknowledgements.
        var newestSequence: UInt32
        var deadline: ContinuousClock.Instant
        var timeout: Duration
        var continuation: CheckedContinuation<UInt32, any Error>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var polling = false
        /// The cycle counter when the period estimate was last updated, and when.
        var cycleSample: (cycles: UInt64, at: ContinuousClock.Instant)?
        /// When the polling thread found nobody waiting for the first time since someone did.
        var idleSince: ContinuousClock.Instant?
        /// The poll interval: half the estimated audio period, within `pollBounds`.
        var pollInterval = AcknowledgementWatcher.pollBounds.lowerBound
    }

    private let mailbox: EngineMailbox
    private let state = Mutex(State())
    /// The shortest and longest poll interval.
    static let pollBounds = Duration.microseconds(250)...Duration.milliseconds(1)
    /// How long the polling thread goes on polling with nobody waiting before it ends.
    static let linger = Duration.milliseconds(20)

    init(mailbox: EngineMailbox) {
        self.mailbox = mailbox
    }

    /// Returns the cycle in which the last of `targets` took effect; throws
    /// `EngineError.superseded` when the audio thread never rendered one of them (a newer value
    /// of its parameter came first), `EngineError.timeout` when not all were resolved within
    /// `timeout`, and `CancellationError` when the waiting task is cancelled.
    func wait(for targets: [(index: Int, sequence: UInt32)], timeout: Duration) async throws -> UInt32 {
        try await wait(until: { [self] in resolve(targets) }, newestSequence: targets.last?.sequence ?? 0,
                       timeout: timeout)
    }

    /// Waits until `resolve` reports an outcome (polled with the parameters' acknowledgements),
    /// and returns or throws it; `EngineError.timeout` when none came within `timeout`,
    /// `CancellationError` when the waiting task is cancelled.
    func wait(until resolve: @escaping @Sendable () -> Result<UInt32, any Error>?, newestSequence: UInt32 = 0,
              timeout: Duration) async throws -> UInt32 {
        if let result = resolve() { return try result.get() }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let startPoller = state.withLock { state -> Bool in
                    state.waiters[id] = Waiter(
                        resolve: resolve, newestSequence: newestSequence, deadline: .now + timeout, timeout: timeout, continuation: continuation)
                    defer { state.polling = true }
                    return !state.polling
                }
                if startPoller {
                    let thread = Thread { [self] in poll() }
                    thread.name = "soundfit-acks"
                    thread.start()
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The outcome once every target is resolved, else nil: the cycle of the latest
    /// acknowledgement when all were applied, `EngineError.superseded` when any was not.
    private func resolve(_ targets: [(index: Int, sequence: UInt32)]) -> Result<UInt32, any Error>? {
        var cycle: UInt32 = 0
        var superseded = false
        for target in targets {
            switch mailbox.acknowledgement(of: target.sequence, index: target.index) {
            case .waiting:
                return nil
            case .applied(let applied):
                cycle = max(cycle, applied)
            case .beyondHistory(let later):
                // Starved: a later value took effect by then, in its place or after it.
                cycle = max(cycle, later)
            case .superseded:
                superseded = true
            }
        }
        return superseded ? .failure(EngineError.superseded) : .success(cycle)
    }

    /// The polling thread's loop; it ends when nobody waits any more.
    private func poll() {
        var interval = state.withLock { $0.pollInterval }
        while true {
            Thread.sleep(forTimeInterval: interval.seconds)
            let now = ContinuousClock.now
            let cycles = mailbox.cycleCount
            var finished: [(waiter: Waiter, result: Result<UInt32, any Error>)] = []
            let keepPolling = state.withLock { state -> Bool in
                Self.updatePollInterval(&state, cycles: cycles, now: now)
                interval = state.pollInterval
                for (id, waiter) in state.waiters {
                    if let result = waiter.resolve() {
                        finished.append((waiter, result))
                        state.waiters[id] = nil
                    } else if now >= waiter.deadline {
                        finished.append((waiter, .failure(EngineError.timeout(seconds: waiter.timeout.seconds))))
                        state.waiters[id] = nil
                    }
                }
                // The thread lingers for `linger` after the last waiter left, so that a steady
                // stream of sets keeps one thread instead of starting one per set.
                if !state.waiters.isEmpty {
                    state.idleSince = nil
                } else if let idleSince = state.idleSince {
                    if now - idleSince >= Self.linger { state.polling = false; state.idleSince = nil }
                } else {
                    state.idleSince = now
                }
                return state.polling
            }
            // When one poll resolves several values (the watcher fell behind), their waiters
            // resume in the order the values were published (serial order of the sequences).
            finished.sort { Int32(bitPattern: $0.waiter.newestSequence &- $1.waiter.newestSequence) < 0 }
            for (waiter, result) in finished {
                waiter.continuation.resume(with: result)
            }
            if !keepPolling { return }
        }
    }

    /// Re-estimates the audio period from the cycles counted over at least 20 ms, and sets the
    /// poll interval to half of it (within `pollBounds`). Without cycles (an engine that is not
    /// running, or rendered on demand in tests) the interval stays as it is.
    private static func updatePollInterval(_ state: inout State, cycles: UInt64, now: ContinuousClock.Instant) {
        guard let sample = state.cycleSample, cycles >= sample.cycles else {
            state.cycleSample = (cycles, now)
            return
        }
        let elapsed = now - sample.at
        guard elapsed >= .milliseconds(20) else { return }
        let counted = cycles - sample.cycles
        state.cycleSample = (cycles, now)
        guard counted > 0 else { return }
        let half = elapsed / Double(counted) / 2
        state.pollInterval = min(max(half, pollBounds.lowerBound), pollBounds.upperBound)
    }
}
