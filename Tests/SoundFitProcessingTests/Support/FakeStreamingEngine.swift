import Synchronization
@testable import SoundFitProcessing

/// What a streaming applicator is for: an engine with one latest-value slot. `submit` publishes
/// a value (in call order); a rendered cycle takes the latest one, which is then confirmed
/// applied, while values overtaken before any cycle took them are confirmed superseded. A test
/// can also settle one submission by hand (fail it, apply it out of order).
final class FakeStreamingEngine: Sendable {
    private struct State {
        /// Every submitted value, in submission order (index = submission number).
        var submitted: [Int] = []
        /// Outcomes of settled submissions.
        var outcomes: [Int: Result<Void, any Error>] = [:]
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        /// Submissions before this one were settled by cycles.
        var settledUpTo = 0
        /// The value the engine renders.
        var rendered: Int?
    }

    private let state = Mutex(State())

    /// Publishes `value` and returns the wait for it (a streaming applicator's `submit`).
    func submit(_ value: Int) -> ParameterApplicator<Int>.Confirmation {
        let number = state.withLock { state in
            state.submitted.append(value)
            return state.submitted.count - 1
        }
        return { try await self.confirmation(of: number) }
    }

    private func confirmation(of number: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let outcome = state.outcomes[number] { return outcome }
                state.waiters[number] = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Settles submission `number` (unless settled already).
    func settle(_ number: Int, _ outcome: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard state.outcomes[number] == nil else { return nil }
            state.outcomes[number] = outcome
            if case .success = outcome { state.rendered = state.submitted[number] }
            return state.waiters.removeValue(forKey: number)
        }
        waiter?.resume(with: outcome)
    }

    /// An audio cycle: the latest submission is applied, the unsettled ones before it superseded.
    func renderCycle() {
        let (first, last) = state.withLock { state -> (Int, Int) in
            defer { state.settledUpTo = state.submitted.count }
            return (state.settledUpTo, state.submitted.count)
        }
        guard last > first else { return }
        for number in first..<(last - 1) {
            settle(number, .failure(ProcessingParameterError.superseded))
        }
        settle(last - 1, .success(()))
    }

    /// The values submitted so far, in order.
    var submitted: [Int] { state.withLock { $0.submitted } }

    /// The value the engine renders (the latest applied).
    var rendered: Int? { state.withLock { $0.rendered } }

    /// The submission number of the latest submission of `value`.
    func number(of value: Int) -> Int? { state.withLock { $0.submitted.lastIndex(of: value) } }
}
