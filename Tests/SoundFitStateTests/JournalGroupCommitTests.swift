import Foundation
import SoundFitTestSupport
@testable import SoundFitState
import Synchronization
import Testing

/// Applied means persisted: `journaled()` returns once the state is in the journal file, the
/// callers that arrive while an append runs share the next one, and a journal that cannot be
/// written is reported and tried again until it can.
///
/// `@_optimize(none)`: see `DurableStateStoreTests`.
@Suite struct JournalGroupCommitTests {
    private func defaults() throws -> StateDocument { try TestDocuments.defaults() }

    /// A store whose `state.json` is only written by `flush()`, taking its state from `gain`.
    private func store(_ directory: URL, gain: Gain, retryInterval: Duration = .seconds(1),
                       beforeSnapshot: @escaping @Sendable () -> Void = {}) -> DurableStateStore {
        let store = DurableStateStore(directory: directory, descriptors: TestParameters.descriptors,
                                      timing: .init(quietPeriod: .seconds(3600), maximumDelay: .seconds(3600),
                                                    retryInterval: retryInterval))
        store.follow {
            beforeSnapshot()
            return try? TestDocuments.document(gain: gain.value)
        }
        return store
    }

    /// What a start after `kill -9` would restore from `directory` (the journal's last record).
    private func restored(_ directory: URL) throws -> StateDocument {
        DurableStateStore(directory: directory, descriptors: TestParameters.descriptors, readOnly: true)
            .load(defaults: try defaults()).document
    }

    @_optimize(none)
    @Test func everyChangeIsInTheJournalFileWhenJournaledReturns() async throws {
        let directory = try TemporaryDirectory()
        let gain = Gain(0)
        let running = store(directory.url, gain: gain)
        _ = running.load(defaults: try defaults())
        for step in 1...50 {
            let value = Float(-step) * 0.5
            gain.value = value
            await running.journaled()
            // No waiting: the record is in the file now, as a crash right now would find it.
            #expect(try restored(directory.url) == (try TestDocuments.document(gain: value)), "step \(step)")
        }
        #expect(!FileManager.default.fileExists(atPath: running.url.path), "state.json was written: the journal showed nothing")
        #expect(running.persistenceProblem == nil)
    }

    /// 1 000 callers arrive while one append is held in its snapshot: they all share the next
    /// append, so there are two appends for 1 001 changes.
    @_optimize(none)
    @Test func callersArrivingDuringAnAppendShareTheNextOne() async throws {
        let directory = try TemporaryDirectory()
        let gain = Gain(-1)
        let gate = DispatchSemaphore(value: 0)
        let first = Atomic<Bool>(true)
        let running = store(directory.url, gain: gain) {
            if first.exchange(false, ordering: .sequentiallyConsistent) { gate.wait() }
        }
        _ = running.load(defaults: try defaults())
        async let firstCaller: Void = running.journaled()
        #expect(await eventually { running.journalWaiterCount == 1 })
        gain.value = -2
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 { group.addTask { await running.journaled() } }
            #expect(await eventually { running.journalWaiterCount == 1001 })
            gate.signal()
        }
        await firstCaller
        #expect(running.journalAppendCount == 2, "\(running.journalAppendCount) appends for 1 001 callers")
        #expect(try restored(directory.url) == (try TestDocuments.document(gain: -2)))
    }

    /// The journal cannot be written (a file stands where the state directory should be): the
    /// caller is not kept waiting, the store says why, and once the directory is usable the
    /// state reaches the journal without another change.
    @_optimize(none)
    @Test func anUnwritableJournalIsReportedAndResumesByItself() async throws {
        let directory = try TemporaryDirectory()
        let blocked = directory.url.appendingPathComponent("state")
        try blocked.write("a file where the state directory should be")
        let gain = Gain(-3)
        let running = store(blocked, gain: gain, retryInterval: .milliseconds(50))
        var events = running.events.makeAsyncIterator()
        await running.journaled()
        let problem = try #require(running.persistenceProblem)
        #expect(problem.contains(blocked.path), "\(problem)")
        if case .failed(let message)? = await events.next() {
            #expect(message.contains("state journal"), "\(message)")
        } else {
            Issue.record("no failure event")
        }
        // Failing again the same way is not reported again.
        await running.journaled()
        #expect(running.persistenceProblem == problem)

        try FileManager.default.removeItem(at: blocked)
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: true)
        #expect(await eventually { running.persistenceProblem == nil }, "persistence did not resume")
        #expect(try restored(blocked) == (try TestDocuments.document(gain: -3)))
    }

    /// Compaction: `state.json` takes the snapshot and the journal goes; a change journaled
    /// after it starts a new journal, which a start replays over `state.json`.
    @_optimize(none)
    @Test func compactionKeepsOnlyWhatIsNewerThanStateJson() async throws {
        let directory = try TemporaryDirectory()
        let gain = Gain(-4)
        let running = store(directory.url, gain: gain)
        _ = running.load(defaults: try defaults())
        running.changed()
        try await running.flush()
        #expect(directory.names() == ["state.json"])
        gain.value = -5
        await running.journaled()
        #expect(directory.names() == ["state.journal", "state.json"])
        #expect(try restored(directory.url) == (try TestDocuments.document(gain: -5)))
    }
}

/// The gain a test's source reports, set by the test.
private final class Gain: Sendable {
    private let current: Mutex<Float>
    init(_ value: Float) { current = Mutex(value) }
    var value: Float {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
