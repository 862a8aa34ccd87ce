import Foundation
import SoundFitTestSupport
@testable import SoundFitState
import Testing

/// The write-ahead journal: a submitted state is on disk within milliseconds, long before the
/// debounced `state.json`, and a restart after a crash takes it.
@Suite struct StateJournalTests {
    private func defaults() throws -> StateDocument { try TestDocuments.defaults() }

    private func document(gain: Float) throws -> StateDocument { try TestDocuments.document(gain: gain) }

    /// A store whose `state.json` is only written by `flush()` (the quiet period never ends in a test).
    private func store(_ directory: TemporaryDirectory) -> DurableStateStore {
        DurableStateStore(directory: directory.url, descriptors: TestParameters.descriptors,
                          timing: .init(quietPeriod: .seconds(3600), maximumDelay: .seconds(3600)))
    }

    /// Waits until `condition` holds (at most 5 s).
    private func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test func aSubmittedStateSurvivesACrashBeforeStateJsonIsWritten() async throws {
        let directory = try TemporaryDirectory()
        let running = store(directory)
        _ = running.load(defaults: try defaults())
        for gain in stride(from: Float(-1), through: -9, by: -1) { running.submit(try document(gain: gain)) }
        #expect(try await eventually { FileManager.default.fileExists(atPath: running.journalURL.path) })
        try await Task.sleep(for: .milliseconds(50))
        #expect(!FileManager.default.fileExists(atPath: running.url.path), "state.json was written: the test shows nothing")

        // A crash now: a new store on the same directory, as after kill -9.
        let restarted = store(directory).load(defaults: try defaults())
        #expect(restarted.replayedJournal)
        #expect(restarted.document == (try document(gain: -9)))
        #expect(restarted.warnings.contains { $0.contains("state.journal") })
    }

    @Test func aWrittenStateEmptiesTheJournal() async throws {
        let directory = try TemporaryDirectory()
        let running = store(directory)
        _ = running.load(defaults: try defaults())
        running.submit(try document(gain: -4))
        try await running.flush()
        #expect(try await eventually { !FileManager.default.fileExists(atPath: running.journalURL.path) })
        #expect(directory.names() == ["state.json"])
        let restarted = store(directory).load(defaults: try defaults())
        #expect(!restarted.replayedJournal)
        #expect(restarted.document == (try document(gain: -4)))
    }

    @Test func aTornLastRecordIsIgnored() async throws {
        let directory = try TemporaryDirectory()
        let running = store(directory)
        _ = running.load(defaults: try defaults())
        running.submit(try document(gain: -2))
        #expect(try await eventually { FileManager.default.fileExists(atPath: running.journalURL.path) })
        try await Task.sleep(for: .milliseconds(50))
        // Measured before the second submit: its append starts at once.
        let lengthAfterFirst = try Data(contentsOf: running.journalURL).count
        running.submit(try document(gain: -3))
        #expect(try await eventually { ((try? Data(contentsOf: running.journalURL).count) ?? 0) > lengthAfterFirst })
        // Cut the second record in half, as a power loss in the middle of its write would.
        let journal = try Data(contentsOf: running.journalURL)
        try journal.prefix(lengthAfterFirst + (journal.count - lengthAfterFirst) / 2).write(to: running.journalURL)
        let restarted = store(directory).load(defaults: try defaults())
        #expect(restarted.document == (try document(gain: -2)))

        // A corrupted checksum is the same as a torn record.
        var flipped = try Data(contentsOf: running.journalURL)
        flipped[20] ^= 0xFF
        try flipped.write(to: running.journalURL)
        #expect(store(directory).load(defaults: try defaults()).document == (try defaults()))
    }

    @Test func crcMatchesTheZlibValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
