import Foundation
import Synchronization

/// Waits for the audio thread's acknowledgements without the audio thread waking anyone:
/// while someone waits, a control-side task polls the mailbox every 250 µs (it stops polling
/// when nobody waits, so an idle SoundFit costs nothing here).
final class AcknowledgementWatcher: Sendable {
    private struct Waiter {
        var targets: [(index: Int, sequence: UInt32)]
        var deadline: ContinuousClock.Instant
        var timeout: Duration
        var continuation: CheckedContinuation<UInt32, any Error>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var polling = false
    }

    private let mailbox: EngineMailbox
    private let state = Mutex(State())
    private static let pollInterval = Duration.microseconds(250)

    init(mailbox: EngineMailbox) {
        self.mailbox = mailbox
    }

    /// Returns the cycle in which the last of `targets` took effect.
    func wait(for targets: [(index: Int, sequence: UInt32)], timeout: Duration) async throws -> UInt32 {
        if let cycle = acknowledgedCycle(targets) { return cycle }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let startPoller = state.withLock { state -> Bool in
                    state.waiters[id] = Waiter(
                        targets: targets, deadline: .now + timeout, timeout: timeout, continuation: continuation)
                    defer { state.polling = true }
                    return !state.polling
                }
                if startPoller {
                    Task.detached { [self] in await poll() }
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The cycle of the latest acknowledgement if every target took effect, else nil.
    private func acknowledgedCycle(_ targets: [(index: Int, sequence: UInt32)]) -> UInt32? {
        var cycle: UInt32 = 0
        for target in targets {
            let ack = mailbox.acknowledgement(index: target.index)
            // Serial-number comparison: a later sequence implies this one was overtaken in the
            // slot and the newer value took effect in its place.
            guard Int32(bitPattern: ack.sequence &- target.sequence) >= 0, ack.sequence != 0 else { return nil }
            cycle = max(cycle, ack.cycle)
        }
        return cycle
    }

    private func poll() async {
        while true {
            try? await Task.sleep(for: Self.pollInterval)
            let now = ContinuousClock.now
            var finished: [(Waiter, Result<UInt32, any Error>)] = []
            let keepPolling = state.withLock { state -> Bool in
                for (id, waiter) in state.waiters {
                    if let cycle = acknowledgedCycle(waiter.targets) {
                        finished.append((waiter, .success(cycle)))
                        state.waiters[id] = nil
                    } else if now >= waiter.deadline {
                        finished.append((waiter, .failure(EngineError.timeout(seconds: waiter.timeout.seconds))))
                        state.waiters[id] = nil
                    }
                }
                if state.waiters.isEmpty { state.polling = false }
                return state.polling
            }
            for (waiter, result) in finished {
                waiter.continuation.resume(with: result)
            }
            if !keepPolling { return }
        }
    }
}
