import Foundation
import SoundFitJSON
import SoundFitProcessing
import Synchronization
import SoundFitModel

/// Keeps the current state on disk so that a restart, also after `kill -9` or a power loss,
/// comes back with the last applied state.
///
/// - Files in the state directory: `state.json` (the current state) and `state.previous.json`
///   (the copy before the last write). Both are `StateDocument` files, written atomically
///   (`AtomicFile`) with mode 0600 (the state holds a hearing profile). `state.journal`
///   (`StateJournal`) records every submitted state within `journalDelay` (10 ms), so a change
///   reported applied survives a `kill -9` also in the middle of a burst.
/// - `submit(_:)` after every applied change; `state.json` writes are debounced: `quietPeriod`
///   (200 ms) after the last change, and at most `maximumDelay` (1 s) after the first unwritten
///   one, so a fader moved continuously is saved about once a second; each such write compacts
///   the journal. `flush()` writes at once (shutdown).
/// - Each write first keeps the current file as `state.previous.json` (a hard link renamed into
///   place: atomic), then renames the new file over `state.json`. `state.json` is always a
///   complete document: the old one or the new one.
/// - `load(defaults:)` never fails: a corrupt or partial `state.json` is set aside as
///   `state.corrupt.json` and the previous copy is used; with both unusable, the defaults. Then
///   the journal's last complete record, newer than `state.json` by construction, replaces it.
///   Every fallback and replay comes with a warning to log.
///
/// Thread rules: `submit` from any thread except the audio thread; it only stores the document
/// under a lock and never waits for the disk. Encoding and writing run on a serial background
/// queue, one write at a time, always of the latest document. `load` is synchronous (startup,
/// before the first `submit`). One store per state directory (one SoundFit per directory).
public final class DurableStateStore: Sendable {
    public static let fileName = "state.json"
    public static let previousFileName = "state.previous.json"
    public static let corruptFileName = "state.corrupt.json"

    /// When writes happen.
    public struct Timing: Sendable, Equatable {
        /// Write this long after the last change.
        public var quietPeriod: Duration
        /// But no later than this after the first unwritten change.
        public var maximumDelay: Duration
        /// Journal records are appended this long after a change (changes in between share one).
        public var journalDelay: Duration

        public init(quietPeriod: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(1),
                    journalDelay: Duration = .milliseconds(10)) {
            self.quietPeriod = quietPeriod
            self.maximumDelay = maximumDelay
            self.journalDelay = journalDelay
        }
    }

    /// Where a loaded state came from.
    public enum Origin: Sendable, Equatable {
        /// `state.json`.
        case saved
        /// `state.previous.json`: `state.json` was missing or unusable.
        case previous
        /// Nothing usable (or a first start): the defaults passed to `load`.
        case defaults
    }

    /// What `load` found.
    public struct LoadResult: Sendable {
        public var document: StateDocument
        public var origin: Origin
        /// The journal held changes newer than that file, and they were applied on top.
        public var replayedJournal = false
        /// What went wrong on the way, for the log (empty when `state.json` loaded, or on a
        /// first start without any state file).
        public var warnings: [String]
    }

    /// What the background writer did.
    public enum Event: Sendable, Equatable {
        /// A state was written; the count of writes so far.
        case wrote(count: Int)
        /// A write failed (the message names the file and the reason); the document is written
        /// with the next change or `flush()`.
        case failed(String)
    }

    public let directory: URL
    public let descriptors: [ParameterDescriptor]
    public let timing: Timing
    /// Writes and failures, for logging. Keeps the newest 64 events when nobody listens.
    public let events: AsyncStream<Event>

    private let eventContinuation: AsyncStream<Event>.Continuation
    private let clock: ProcessingClock
    private let queue = DispatchQueue(label: "soundfit.state.writer")
    private let journal: StateJournal
    private let state: Mutex<WriterState>
    /// Reads only (`soundfit render` reading an instance's state, perhaps while it runs):
    /// `load` changes nothing in the directory and `submit` keeps nothing.
    public let isReadOnly: Bool

    private struct WriterState {
        var pending: StateDocument?
        /// Numbers submissions, so a compaction knows whether the journal already has the newest.
        var submissions = 0
        var pendingSubmission = 0
        /// The newest state not yet in the journal, and whether an append is scheduled.
        var journalPending: (document: StateDocument, submission: Int)?
        var journalScheduled = false
        var schedule: PersistenceSchedule
        var writerRunning = false
        /// `state.json` is known to be a good document (loaded or written by this store), so a
        /// write keeps it as the previous copy without reading it first.
        var currentIsGood = false
        var writeCount = 0
        var lastError: String?
    }

    /// A store for `directory` (created on the first write). `descriptors`: the address space
    /// (the parameters are validated and written in its order).
    /// `readOnly`: never writes into `directory` (see `isReadOnly`).
    public init(directory: URL, descriptors: [ParameterDescriptor], timing: Timing = Timing(),
                clock: any Clock<Duration> = ContinuousClock(), readOnly: Bool = false) {
        self.directory = directory
        isReadOnly = readOnly
        self.descriptors = descriptors
        self.timing = timing
        self.clock = ProcessingClock(clock)
        journal = StateJournal(directory: directory)
        (events, eventContinuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
        state = Mutex(WriterState(schedule: PersistenceSchedule(quietPeriod: timing.quietPeriod, maximumDelay: timing.maximumDelay)))
    }

    deinit {
        eventContinuation.finish()
    }

    /// `<directory>/state.json`.
    public var url: URL { directory.appendingPathComponent(Self.fileName) }
    /// `<directory>/state.previous.json`.
    public var previousURL: URL { directory.appendingPathComponent(Self.previousFileName) }
    /// `<directory>/state.corrupt.json`.
    public var corruptURL: URL { directory.appendingPathComponent(Self.corruptFileName) }
    /// `<directory>/state.journal`.
    public var journalURL: URL { journal.url }

    /// How many states were written.
    public var writeCount: Int { state.withLock { $0.writeCount } }

    // MARK: Loading

    /// The last saved state: `state.json`, else `state.previous.json`, else `defaults`. Never
    /// throws; every fallback is explained in `warnings`. Removes temporary files a crash left.
    public func load(defaults: StateDocument) -> LoadResult {
        var result = loadFile(defaults: defaults)
        guard let record = journal.lastRecord() else { return result }
        do {
            var newer = try StateDocument.decode(record, file: journal.url.path, descriptors: descriptors)
            newer.presets = newer.hearingProfile == result.document.hearingProfile ? result.document.presets : []
            if newer != result.document {
                result.document = newer
                result.replayedJournal = true
                result.warnings.append("restored changes newer than the saved state from \(journal.url.path) (SoundFit did not shut down cleanly)")
            }
        } catch {
            result.warnings.append("the journal \(journal.url.path) cannot be used: \(error.problems.map(\.description).joined(separator: "; "))")
        }
        return result
    }

    /// `state.json`, else `state.previous.json`, else `defaults`.
    private func loadFile(defaults: StateDocument) -> LoadResult {
        if !isReadOnly { AtomicFile.removeTemporaries(in: directory) }
        var warnings: [String] = []
        switch read(url) {
        case .document(let document):
            state.withLock { $0.currentIsGood = true }
            return LoadResult(document: document, origin: .saved, warnings: [])
        case .missing:
            if FileManager.default.fileExists(atPath: previousURL.path) {
                warnings.append("the saved state \(url.path) is missing")
            }
        case .unusable(let reason):
            var warning = "the saved state cannot be used: \(reason)"
            if !isReadOnly, rename(url.path, corruptURL.path) == 0 {
                warning += " (kept as \(corruptURL.path) for inspection)"
            }
            warnings.append(warning)
        }
        switch read(previousURL) {
        case .document(let document):
            warnings.append("restored the previous copy \(previousURL.path) (the state before the last write)")
            return LoadResult(document: document, origin: .previous, warnings: warnings)
        case .missing:
            if !warnings.isEmpty { warnings.append("there is no previous copy: starting from the defaults") }
        case .unusable(let reason):
            warnings.append("the previous copy cannot be used either: \(reason); starting from the defaults")
        }
        return LoadResult(document: defaults, origin: .defaults, warnings: warnings)
    }

    private enum ReadResult {
        case document(StateDocument)
        case missing
        case unusable(String)
    }

    private func read(_ url: URL) -> ReadResult {
        guard FileManager.default.fileExists(atPath: url.path) else { return .missing }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return .unusable("\(url.path): cannot read the file")
        }
        do {
            return .document(try StateDocument.decode(data, file: url.path, descriptors: descriptors))
        } catch {
            return .unusable("\(url.path): \(error.problems.map(\.detail).joined(separator: "; "))")
        }
    }

    private func isUsable(_ url: URL) -> Bool {
        if case .document = read(url) { true } else { false }
    }

    // MARK: Writing

    /// Records the state after an applied change; it is written after the quiet period (or the
    /// maximum delay). Returns at once.
    public func submit(_ document: StateDocument) {
        guard !isReadOnly else { return }
        let now = clock.now()
        let (startWriter, scheduleJournal) = state.withLock { state -> (Bool, Bool) in
            state.submissions += 1
            state.pending = document
            state.pendingSubmission = state.submissions
            state.journalPending = (document, state.submissions)
            state.schedule.changed(at: now)
            let scheduleJournal = !state.journalScheduled
            state.journalScheduled = true
            guard !state.writerRunning else { return (false, scheduleJournal) }
            state.writerRunning = true
            return (true, scheduleJournal)
        }
        if scheduleJournal {
            let delay = timing.journalDelay
            let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in appendJournal() }
        }
        if startWriter {
            Task.detached { [self] in await runWriter() }
        }
    }

    /// Appends the newest submitted state to the journal. Runs on `queue`.
    private func appendJournal() {
        let pending = state.withLock { state -> StateDocument? in
            state.journalScheduled = false
            defer { state.journalPending = nil }
            return state.journalPending?.document
        }
        guard let pending else { return }
        // Best effort: a journal that cannot be written is reported by the next compaction
        // (when `state.json` can be written and the journal still cannot).
        try? journal.append(journalRecord(pending))
    }

    /// A document as the journal records it: without the presets, which follow from the profile.
    private func journalRecord(_ document: StateDocument) -> Data {
        var record = document
        record.presets = []
        return record.encoded(descriptors: descriptors)
    }

    /// Writes the latest submitted state now (if not written yet) and waits for the disk.
    /// Throws when the latest state could not be written.
    public func flush() async throws(FileError) {
        await onQueue { self.writePending() }
        if let message = state.withLock({ $0.lastError }) { throw FileError(message) }
    }

    /// Sleeps until the schedule's deadline, writes, and repeats while changes are pending.
    private func runWriter() async {
        while true {
            let deadline = state.withLock { state -> Duration? in
                guard let deadline = state.schedule.deadline else {
                    state.writerRunning = false
                    return nil
                }
                return deadline
            }
            guard let deadline else { return }
            do {
                try await clock.sleep(deadline)
            } catch {
                state.withLock { $0.writerRunning = false }
                return
            }
            let now = clock.now()
            if state.withLock({ $0.schedule.isDue(at: now) }) {
                await onQueue { self.writePending() }
            }
        }
    }

    private func onQueue(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                work()
                continuation.resume()
            }
        }
    }

    /// Writes the pending document, if any. Runs on `queue`.
    private func writePending() {
        let (document, submission, currentIsGood) = state.withLock { state -> (StateDocument?, Int, Bool) in
            let document = state.pending
            state.pending = nil
            state.schedule.taken()
            return (document, state.pendingSubmission, state.currentIsGood)
        }
        guard let document else { return }
        do {
            try document.validate(descriptors: descriptors, file: "state")
        } catch {
            // Never write what `load` would reject: the file keeps the last good state.
            fail("state not saved: \(error.problems.map(\.description).joined(separator: "; "))", retry: nil)
            return
        }
        // Compaction: the journal gets this state first, so its last record is never older
        // than `state.json`, then `state.json` is committed and the journal emptied.
        var journalFailure: String?
        do {
            try journal.append(journalRecord(document))
        } catch {
            journalFailure = error.message
        }
        do {
            try persist(document.encoded(descriptors: descriptors), keepingPrevious: currentIsGood)
        } catch {
            fail(error.message, retry: document)
            return
        }
        if journalFailure == nil {
            let newerPending = state.withLock { state -> Bool in
                if state.journalPending?.submission == submission { state.journalPending = nil }
                return state.journalPending != nil
            }
            // A newer state waiting for its append keeps the journal's history until then.
            if !newerPending {
                do {
                    try journal.remove()
                } catch {
                    journalFailure = error.message
                }
            }
        }
        let count = state.withLock { state -> Int in
            state.currentIsGood = true
            state.lastError = nil
            state.writeCount += 1
            return state.writeCount
        }
        eventContinuation.yield(.wrote(count: count))
        if let journalFailure { eventContinuation.yield(.failed("state journal: \(journalFailure)")) }
    }

    /// Writes `data` as `state.json`, keeping the current file as the previous copy first when
    /// it is known to be good.
    private func persist(_ data: Data, keepingPrevious: Bool) throws(FileError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FileError("cannot create the state directory \(directory.path): \((error as NSError).localizedDescription)")
        }
        let temporary = try AtomicFile.writeTemporary(data, for: url, permissions: 0o600)
        // A `state.json` this store has not read (no `load`, e.g. an import) is kept only if usable.
        if FileManager.default.fileExists(atPath: url.path), keepingPrevious || isUsable(url) {
            // Losing the previous copy is better than losing the new state: go on.
            try? AtomicFile.preserve(url, as: previousURL)
        }
        do {
            try AtomicFile.commit(temporary, to: url)
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    /// Records a failed write; `retry` becomes pending again unless a newer state is, and is
    /// written again after the quiet period (a writer is started if none runs).
    private func fail(_ message: String, retry: StateDocument?) {
        let now = clock.now()
        let startWriter = state.withLock { state -> Bool in
            state.lastError = message
            guard state.pending == nil, let retry else { return false }
            state.pending = retry
            state.schedule.changed(at: now)
            guard !state.writerRunning else { return false }
            state.writerRunning = true
            return true
        }
        eventContinuation.yield(.failed(message))
        if startWriter {
            Task.detached { [self] in await runWriter() }
        }
    }
}
