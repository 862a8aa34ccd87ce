import SoundFitTestSupport
import Foundation
import SoundFitModel
import SoundFitProcessing
@testable import SoundFitState
import Testing

/// The asynchronous tests are `@_optimize(none)`: Swift 6.3.1 crashes (LLVM coroutine
/// splitting, signal 11) compiling them optimized, as `scripts/test.sh` does.
@Suite struct DurableStateStoreTests {
    private func defaults() throws -> StateDocument { try TestDocuments.defaults() }

    private func document(gain: Float) throws -> StateDocument { try TestDocuments.document(gain: gain) }

    private func store(_ directory: TemporaryDirectory, clock: any Clock<Duration> = ContinuousClock()) -> DurableStateStore {
        DurableStateStore(directory: directory.url, descriptors: TestParameters.descriptors, clock: clock)
    }

    /// Submits a document with each gain in turn and waits until each is on disk.
    private func save(_ gains: Float..., to store: DurableStateStore) async throws {
        for gain in gains {
            store.submit(try document(gain: gain))
            try await store.flush()
        }
    }

    /// A store that loaded the defaults, as a start does.
    private func loadedStore(_ directory: TemporaryDirectory, clock: any Clock<Duration> = ContinuousClock()) throws -> DurableStateStore {
        let store = store(directory, clock: clock)
        _ = store.load(defaults: try defaults())
        return store
    }

    /// A store that loaded the defaults saves a document with each gain in turn, then goes
    /// away (as a soundfit that exits).
    @_optimize(none)
    private func saveAndLeave(_ gains: Float..., in directory: TemporaryDirectory) async throws {
        let store = try loadedStore(directory)
        for gain in gains { try await save(gain, to: store) }
    }

    private func onDisk(_ url: URL) throws -> StateDocument {
        try StateDocument.decode(Data(contentsOf: url), file: url.path, descriptors: TestParameters.descriptors)
    }

    @Test func aFirstStartGetsTheDefaultsWithoutWarnings() throws {
        let directory = try TemporaryDirectory()
        let result = store(directory).load(defaults: try defaults())
        #expect(result.origin == .defaults)
        #expect(result.warnings.isEmpty)
        #expect(result.document == (try defaults()))
    }

    /// `soundfit render --state-dir` reads a state directory another SoundFit may be using: the
    /// read-only store loads what a start would (the journal's newer changes too) and changes
    /// nothing there — a corrupt `state.json` stays, temporary files stay, submits write nothing.
    @_optimize(none)
    @Test func aReadOnlyStoreLoadsTheStateAndWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let base = try defaults(), saved = try document(gain: -6), newer = try document(gain: -9)
        // The manual clock never lets the writer's debounced state.json write come due.
        let writer = store(directory, clock: ManualClock())
        _ = writer.load(defaults: base)
        try await save(-6, to: writer)
        writer.submit(newer)   // reaches the journal only
        let reader = DurableStateStore(directory: directory.url, descriptors: TestParameters.descriptors, readOnly: true)
        #expect(await eventually { reader.load(defaults: base).document == newer })
        let temporary = directory.url.appendingPathComponent(".state.json.tmp-1-2")
        try Data("partial".utf8).write(to: temporary)
        let before = directory.names()

        #expect(reader.load(defaults: base).document == newer)
        reader.submit(try document(gain: -12))
        try await reader.flush()
        #expect(directory.names() == before)
        #expect(try onDisk(writer.url) == saved)

        // A corrupt state.json is reported, and left where it is.
        try Data("{".utf8).write(to: writer.url)
        #expect(!reader.load(defaults: base).warnings.isEmpty)
        #expect(directory.names() == before)
    }

    @_optimize(none)
    @Test func aFlushedStateIsWhatTheNextStartLoads() async throws {
        let directory = try TemporaryDirectory()
        let first = try loadedStore(directory)
        try await save(-6, to: first)
        #expect(first.writeCount == 1)
        #expect(directory.names() == ["state.json"])
        let mode = try #require(FileManager.default.attributesOfItem(atPath: first.url.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue == 0o600)

        let restarted = store(directory).load(defaults: try defaults())
        #expect(restarted.origin == .saved)
        #expect(restarted.warnings.isEmpty)
        #expect(restarted.document == (try document(gain: -6)))
    }

    @_optimize(none)
    @Test func manyChangesInAQuickSuccessionAreOneWriteOfTheLastState() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let store = try loadedStore(directory, clock: clock)
        for step in 0..<20 {
            store.submit(try document(gain: -Float(step)))
            await clock.advance(by: .milliseconds(5))
        }
        // 95 ms after the first change, 5 ms after the last: nothing is due yet.
        #expect(await eventually { clock.sleeperCount == 1 })
        await clock.advance(by: .milliseconds(190))
        #expect(store.writeCount == 0)
        #expect(!FileManager.default.fileExists(atPath: store.url.path))
        // 200 ms after the last change.
        await clock.advance(by: .milliseconds(5))
        #expect(await eventually { store.writeCount == 1 })
        #expect(try onDisk(store.url) == (try document(gain: -19)))
        try await store.flush()
        #expect(store.writeCount == 1, "nothing left to write")
    }

    @_optimize(none)
    @Test func aConstantStreamOfChangesIsWrittenEverySecond() async throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let store = try loadedStore(directory, clock: clock)
        var written: [Float] = []
        // A change every 100 ms for 2.5 s: never 200 ms of quiet.
        for step in 0..<25 {
            store.submit(try document(gain: -Float(step)))
            let before = store.writeCount
            await clock.advance(by: .milliseconds(100))
            let elapsed = clock.elapsed
            if elapsed == .seconds(1) || elapsed == .seconds(2) {
                // Due at 1 s after the first unwritten change.
                #expect(await eventually { store.writeCount == before + 1 }, "a write at \(elapsed)")
                if case .float(let gain)? = try onDisk(store.url).parameters["/output/gain"] { written.append(gain) }
            } else {
                #expect(store.writeCount == before, "no write at \(elapsed)")
            }
        }
        // Then quiet: the last change is written 200 ms after it.
        await clock.advance(by: .milliseconds(100))
        #expect(await eventually { store.writeCount == 3 })
        if case .float(let gain)? = try onDisk(store.url).parameters["/output/gain"] { written.append(gain) }
        #expect(written == [-9, -19, -24])
    }

    @_optimize(none)
    @Test func eachWriteKeepsThePreviousCopy() async throws {
        let directory = try TemporaryDirectory()
        let store = try loadedStore(directory)
        try await save(-1, -2, -3, to: store)
        #expect(directory.names() == ["state.json", "state.previous.json"])
        #expect(try onDisk(store.url) == (try document(gain: -3)))
        #expect(try onDisk(store.previousURL) == (try document(gain: -2)))
    }

    @_optimize(none)
    @Test func anImportWithoutLoadingStillKeepsAGoodStateAsThePreviousCopy() async throws {
        let directory = try TemporaryDirectory()
        try await saveAndLeave(-1, in: directory)
        let importer = store(directory)
        try await save(-9, to: importer)
        #expect(try onDisk(importer.url) == (try document(gain: -9)))
        #expect(try onDisk(importer.previousURL) == (try document(gain: -1)))
    }

    @_optimize(none)
    @Test func aCorruptStateFallsBackToThePreviousCopyAndSaysSo() async throws {
        let directory = try TemporaryDirectory()
        try await saveAndLeave(-1, -2, in: directory)
        let url = directory.url.appendingPathComponent("state.json")
        try url.write("{\"format\": \"soundfit.state\", garbage")
        let store = store(directory)
        let result = store.load(defaults: try defaults())
        #expect(result.origin == .previous)
        #expect(result.document == (try document(gain: -1)))
        #expect(result.warnings.count == 2)
        #expect(result.warnings.first?.contains("the saved state cannot be used: \(url.path): line 1, column 30: invalid JSON: ") == true, "\(result.warnings)")
        #expect(result.warnings.first?.contains("kept as \(store.corruptURL.path)") == true)
        #expect(result.warnings.last?.contains("restored the previous copy") == true)
        #expect(store.corruptURL.text.hasSuffix("garbage"))

        // The next write does not rotate the corrupt file into the previous copy.
        try await save(-5, to: store)
        #expect(try onDisk(store.url) == (try document(gain: -5)))
        #expect(try onDisk(store.previousURL) == (try document(gain: -1)))
        try await save(-6, to: store)
        #expect(try onDisk(store.previousURL) == (try document(gain: -5)))
    }

    @Test func withBothCopiesBrokenItStartsFromTheDefaultsAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        try directory.url.appendingPathComponent("state.json").write("")
        try directory.url.appendingPathComponent("state.previous.json").write("{\"format\": \"soundfit.state\", \"version\": 1}")
        let result = store(directory).load(defaults: try defaults())
        #expect(result.origin == .defaults)
        #expect(result.document == (try defaults()))
        #expect(result.warnings.count == 2)
        #expect(result.warnings.last?.contains("the previous copy cannot be used either") == true, "\(result.warnings)")
        #expect(result.warnings.last?.contains("delivery: missing") == true, "\(result.warnings)")
        #expect(result.warnings.last?.hasSuffix("starting from the defaults") == true)
    }

    @_optimize(none)
    @Test func aMissingStateWithAPreviousCopyUsesTheCopy() async throws {
        let directory = try TemporaryDirectory()
        try await saveAndLeave(-1, -2, in: directory)
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("state.json"))
        let result = store(directory).load(defaults: try defaults())
        #expect(result.origin == .previous)
        #expect(result.document == (try document(gain: -1)))
        #expect(result.warnings.first?.contains("is missing") == true)
    }

    @Test func everyTruncationOfAStateFileIsDetected() throws {
        var document = try document(gain: -3)
        document.currentPatch = CurrentPatch(number: 2, name: "Lowpass 1 kHz", isModified: true)
        let data = document.encoded(descriptors: TestParameters.descriptors)
        #expect(data.last == UInt8(ascii: "\n"))
        // Every prefix short of the final closing brace is rejected (what a torn write would leave).
        for length in 0..<(data.count - 1) {
            do {
                _ = try StateDocument.decode(data.prefix(length), file: "state.json", descriptors: TestParameters.descriptors)
                Issue.record("\(length) of \(data.count) bytes accepted")
            } catch {
                let expected = length == 0 ? "the file is empty" : "the file is truncated?"
                #expect(error.description.contains(expected), "\(length) of \(data.count) bytes: \(error)")
            }
        }
        #expect(try StateDocument.decode(data.prefix(data.count - 1), file: "state.json", descriptors: TestParameters.descriptors) == document)
    }

    @_optimize(none)
    @Test func aTruncatedStateFileFallsBack() async throws {
        let directory = try TemporaryDirectory()
        try await saveAndLeave(-1, -2, in: directory)
        let url = directory.url.appendingPathComponent("state.json")
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        let result = store(directory).load(defaults: try defaults())
        #expect(result.origin == .previous)
        #expect(result.document == (try document(gain: -1)))
        #expect(result.warnings.first?.contains("truncated") == true, "\(result.warnings)")
    }

    @_optimize(none)
    @Test func temporaryFilesOfACrashedWriteAreIgnoredAndRemoved() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("state.json")
        try await saveAndLeave(-1, in: directory)
        // `kill -9` after the temporary file was written, before the rename.
        _ = try AtomicFile.writeTemporary(try document(gain: -2).encoded(descriptors: TestParameters.descriptors).prefix(100), for: url)
        #expect(directory.names().count == 2)
        let result = store(directory).load(defaults: try defaults())
        #expect(result.origin == .saved)
        #expect(result.document == (try document(gain: -1)))
        #expect(directory.names() == ["state.json"])
    }

    @_optimize(none)
    @Test func aStateThatWouldNotLoadIsNeverWritten() async throws {
        let directory = try TemporaryDirectory()
        let store = try loadedStore(directory)
        try await save(-1, to: store)
        var invalid = try document(gain: -2)
        invalid.parameters["/filter/cutoff"] = .float(99_999)
        store.submit(invalid)
        await #expect(throws: FileError.self) { try await store.flush() }
        #expect(try onDisk(store.url) == (try document(gain: -1)))
        try await save(-3, to: store)
        #expect(try onDisk(store.url) == (try document(gain: -3)))
    }

    @_optimize(none)
    @Test func aFailedWriteIsReportedAndRetried() async throws {
        let directory = try TemporaryDirectory()
        let blocked = directory.url.appendingPathComponent("state")
        try blocked.write("a file where the state directory should be")
        let store = DurableStateStore(directory: blocked, descriptors: TestParameters.descriptors)
        var events = store.events.makeAsyncIterator()
        store.submit(try document(gain: -1))
        do {
            try await store.flush()
            Issue.record("writing into a file succeeded")
        } catch {
            #expect(error.message.contains(blocked.path), "\(error)")
        }
        if case .failed(let message)? = await events.next() {
            #expect(message.contains(blocked.path))
        } else {
            Issue.record("no failure event")
        }
        // The directory becomes usable: the pending state is written by the next flush.
        try FileManager.default.removeItem(at: blocked)
        try await store.flush()
        #expect(try onDisk(store.url) == (try document(gain: -1)))
        // The journal's failure and state.json's are each reported once; then the write.
        var next = await events.next()
        while case .failed? = next { next = await events.next() }
        #expect(next == .wrote(count: 1))
    }
}

@Suite struct PersistenceScheduleTests {
    @Test func theDeadlineIsAQuietPeriodAfterTheLastChangeButNoLaterThanTheMaximumDelay() {
        var schedule = PersistenceSchedule(quietPeriod: .milliseconds(200), maximumDelay: .seconds(1))
        #expect(schedule.deadline == nil)
        schedule.changed(at: .milliseconds(100))
        #expect(schedule.deadline == .milliseconds(300))
        schedule.changed(at: .milliseconds(250))
        #expect(schedule.deadline == .milliseconds(450))
        #expect(!schedule.isDue(at: .milliseconds(449)))
        #expect(schedule.isDue(at: .milliseconds(450)))
        schedule.changed(at: .milliseconds(1000))
        #expect(schedule.deadline == .milliseconds(1100), "the first unwritten change was at 100 ms")
        schedule.taken()
        #expect(schedule.deadline == nil)
        schedule.changed(at: .milliseconds(1050))
        #expect(schedule.deadline == .milliseconds(1250))
    }

    @Test func theMaximumDelayIsNeverShorterThanTheQuietPeriod() {
        var schedule = PersistenceSchedule(quietPeriod: .milliseconds(500), maximumDelay: .milliseconds(100))
        schedule.changed(at: .zero)
        #expect(schedule.deadline == .milliseconds(500))
    }
}
