import SoundFitTestSupport
import Synchronization
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// A parameter with a persistence step takes the value
/// first (so a snapshot of the state has it), then waits for the step; only after it is the
/// change fed to the change feed (value feedback) and the request reported `applied`.
@Suite(.timeLimit(.minutes(1)))
struct PersistenceStepTests {
    let clock = ManualClock()

    @Test func feedbackAndAppliedWaitForThePersistenceStep() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let gate = PersistenceGate()
        parameter.persistAppliedValues { await gate.pass() }
        let fed = Recorder<Int>()
        let changes = parameter.changeUpdates()
        let feed = Task { for await change in changes { fed.record(change.value) } }
        defer { feed.cancel() }

        let request = try parameter.request(2)
        let reported = Recorder<String>()
        let reports = Task { for await state in request.states { reported.record(state.description) } }
        while gate.entered < 1 { await Task.yield() }
        // Give the feed's and the reports' consumers every chance to see what was sent so far.
        for _ in 0..<200 { await Task.yield() }

        #expect(parameter.value == 2, "the value is taken before the step")
        #expect(fed.events.isEmpty, "fed before it was persisted: \(fed.events)")
        #expect(!reported.events.contains("applied(2)"), "reported applied before it was persisted")

        gate.open()
        await reports.value
        #expect(reported.events.last == "applied(2)")
        await fed.waitForCount(1)
        #expect(fed.events == [2])
    }

    @Test func withoutAStepTheChangeIsFedAtOnce() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let changes = parameter.changeUpdates()
        let request = try parameter.request(2)
        #expect(await request.terminalState().description == "applied(2)")
        #expect(await take(1, from: changes).map(\.value) == [2])
    }
}

/// A persistence step that holds every caller until `open()`.
private final class PersistenceGate: Sendable {
    private struct State {
        var entered = 0
        var isOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Callers that reached the step so far.
    var entered: Int { state.withLock { $0.entered } }

    func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passes = state.withLock { state -> Bool in
                state.entered += 1
                if state.isOpen { return true }
                state.waiting.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
