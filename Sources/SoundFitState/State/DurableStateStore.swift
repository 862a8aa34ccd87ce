import Foundation
import SoundFitJSON
import SoundFitProcessing
import Synchronization
import SoundFitModel
import SoundFitHearing

/// Keeps the current state on disk so that a restart, also after `kill -9` or a power loss,
/// comes back with the last applied state.
///
/// - Files in the state directory: `state.json` (the current state) and `state.previous.json`
///   (the copy before the last write). Both are `StateDocument` files, written atomically
///   (`AtomicFile`) with mode 0600 (the state holds a hearing profile). `state.journal`
///   (`StateJournal`) is the write-ahead journal: `journaled()` returns once a record of the
///   state as it is now is in the journal file (`write(2)` returned), so a change reported
///   applied only after it survives a `kill -9` also in the middle of a burst.
/// - Group commit: appends run one at a time on the journal queue; the callers of
///   `journaled()` that arrive while one runs are all covered by the next single append (one
///   snapshot of the state, one `write(2)`): the values one audio cycle acknowledges share an
///   append (BENCHMARKS.md, "Applied means persisted").
/// - The state comes from a `Source` (`follow(_:)`, the state keeper: it reads what every
///   parameter holds when the snapshot is taken, so a record is never older than an earlier
///   one), or from the last `submit(_:)`ted document (imports, tests).
/// - When the state cannot be written (full disk, read-only, I/O error) the store says so
///   (`persistenceProblem`, one `.failed` event per new problem), keeps trying (the journal
///   every `retryInterval`, `state.json` after each quiet period) and the problem clears by
///   itself when a write succeeds again.
/// - `changed()` or `submit(_:)` after every change; `state.json` writes are debounced: `quietPeriod`
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
/// Thread rules: `submit`, `changed` and `journaled` from any thread except the audio thread;
/// the first two never wait for the disk. Journal appends run on a serial journal queue, and
/// `state.json` writes on a serial writer queue (so an fsync never holds up an append); the
/// `Source` is called on the journal queue. `load` is synchronous (startup, before the first
/// `submit`). One store per state directory (one SoundFit per directory).
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
        /// While the journal cannot be written, it is tried again this often (besides every
        /// change), so persistence resumes by itself when the disk recovers.
        public var retryInterval: Duration

        public init(quietPeriod: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(1),
                    retryInterval: Duration = .seconds(1)) {
            self.quietPeriod = quietPeriod
            self.maximumDelay = maximumDelay
            self.retryInterval = retryInterval
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
        /// with the next change or `flush()`. A journal append that keeps failing the same way
        /// is reported once.
        case failed(String)
    }

    /// The state as it is now, for a journal record or a `state.json` write, without the
    /// informational presets; called on the journal queue, so it must be quick (every
    /// `applied` waits for it). nil: nothing to write (its owner is gone).
    public typealias Source = @Sendable () -> StateDocument?
    /// The informational presets of a document about to be written as `state.json` (they follow
    /// from its profile; generating them can take a while): called on the writer queue.
    public typealias Presets = @Sendable (StateDocument) -> [PresetPayload]

    public let directory: URL
    public let descriptors: [ParameterDescriptor]
    public let timing: Timing
    /// Writes and failures, for logging. Keeps the newest 64 events when nobody listens.
    public let events: AsyncStream<Event>

    private let eventContinuation: AsyncStream<Event>.Continuation
    private let clock: DeliveryClock
    private let queue = DispatchQueue(label: "soundfit.state.writer")
    private let journalQueue = DispatchQueue(label: "soundfit.state.journal")
    private let journal: StateJournal
    private let state: Mutex<WriterState>
    private let commits: Mutex<JournalState>
    /// Reads only (`soundfit render` reading an instance's state, perhaps while it runs):
    /// `load` changes nothing in the directory and `submit` keeps nothing.
    public let isReadOnly: Bool

    private struct WriterState {
        /// A change is not in `state.json` yet.
        var pending = false
        /// The last submitted document (without a source).
        var submitted: StateDocument?
        var source: Source?
        var presets: Presets?
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
        self.clock = DeliveryClock(clock)
        journal = StateJournal(directory: directory)
        (events, eventContinuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
        state = Mutex(WriterState(schedule: PersistenceSchedule(quietPeriod: timing.quietPeriod, maximumDelay: timing.maximumDelay)))
        commits = Mutex(JournalState())
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

    /// Why the state is not persisted now (the last journal append or `state.json` write
    /// failed), nil when it is. Surfaces report it (`/status persisted`, a "not persisted"
    /// error after `applied`).
    public var persistenceProblem: String? {
        if let problem = commits.withLock({ $0.problem }) { return problem }
        return state.withLock { $0.lastError }
    }

    /// How many journal appends succeeded (a group commit covers many `journaled()` calls).
    public var journalAppendCount: Int { commits.withLock { $0.appendCount } }

    /// The callers of `journaled()` waiting now (tests).
    var journalWaiterCount: Int { commits.withLock { $0.waiters.count } }

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

    // MARK: Changing

    /// Takes the state from `source` from now on (see `Source`): journal records and
    /// `state.json` writes are snapshots taken when they are written; `state.json` gets the
    /// presets `presets` generates for its snapshot.
    public func follow(_ source: @escaping Source, presets: Presets? = nil) {
        state.withLock { state in
            state.source = source
            state.presets = presets
        }
    }

    /// Records a document after an applied change (without a `Source`): it reaches the journal
    /// within a moment and `state.json` after the quiet period (or the maximum delay). Returns
    /// at once.
    public func submit(_ document: StateDocument) {
        guard !isReadOnly else { return }
        state.withLock { $0.submitted = document }
        changed()
    }

    /// The state changed: it reaches `state.json` after the quiet period (or the maximum
    /// delay), and, with `journaling`, the journal within a moment (a caller that reports the
    /// change awaits `journaled()` instead). Returns at once.
    public func changed(journaling: Bool = true) {
        guard !isReadOnly else { return }
        let now = clock.now()
        let startWriter = state.withLock { state -> Bool in
            state.pending = true
            state.schedule.changed(at: now)
            guard !state.writerRunning else { return false }
            state.writerRunning = true
            return true
        }
        if journaling { requestAppend(waiter: nil) }
        if startWriter {
            Task.detached { [self] in await runWriter() }
        }
    }

    /// Returns once the state as it is now (every change made before the call) is in the
    /// journal file — `write(2)` returned, so a `kill -9` cannot lose it — or the append that
    /// would have written it failed (then `persistenceProblem` says why). Waits for at most one
    /// append in progress plus the one that covers it.
    public func journaled() async {
        guard !isReadOnly else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            requestAppend(waiter: continuation)
        }
    }

    // MARK: Journal (group commit)

    private struct JournalState {
        /// Numbers the requests for an append (`journaled()`, `changed()`).
        var requested = 0
        /// Every request up to this number was covered by an append that ended.
        var covered = 0
        /// The callers of `journaled()` and the request number each waits for.
        var waiters: [(request: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// An append round is scheduled or running on the journal queue.
        var appending = false
        var retryScheduled = false
        /// Why the last append failed; nil after a successful one.
        var problem: String?
        /// Successful appends so far.
        var appendCount = 0
    }

    /// Numbers a request for an append and starts a round unless one is scheduled; a
    /// `waiter` is resumed once an append that started after this call ended.
    private func requestAppend(waiter: CheckedContinuation<Void, Never>?) {
        let startRound = commits.withLock { commits -> Bool in
            commits.requested += 1
            if let waiter { commits.waiters.append((commits.requested, waiter)) }
            guard !commits.appending else { return false }
            commits.appending = true
            return true
        }
        if startRound { journalQueue.async { [self] in appendRounds() } }
    }

    /// Appends snapshots while requests are uncovered: each round covers every request made
    /// before its snapshot. Runs on the journal queue.
    private func appendRounds() {
        while true {
            let target = commits.withLock { $0.requested }
            if target > commits.withLock({ $0.covered }) {
                appendSnapshot(covering: target)
            }
            let more = commits.withLock { commits -> Bool in
                if commits.requested > commits.covered { return true }
                commits.appending = false
                return false
            }
            if !more { return }
        }
    }

    /// Takes a snapshot, appends it and resumes the waiters it covers. Runs on the journal
    /// queue; returns the snapshot (nil when there is no state yet).
    @discardableResult
    private func appendSnapshot(covering target: Int) -> StateDocument? {
        let document = snapshot()
        var failure: String?
        if let document {
            do {
                try journal.append(journalRecord(document))
            } catch {
                failure = error.message
            }
        }
        let (waiters, newProblem, scheduleRetry) = commits.withLock { commits in
            commits.covered = max(commits.covered, target)
            let previous = commits.problem
            if document != nil {
                commits.problem = failure
                if failure == nil { commits.appendCount += 1 }
            }
            var resumed: [CheckedContinuation<Void, Never>] = []
            commits.waiters.removeAll { waiter in
                guard waiter.request <= target else { return false }
                resumed.append(waiter.continuation)
                return true
            }
            let scheduleRetry = commits.problem != nil && !commits.retryScheduled
            if scheduleRetry { commits.retryScheduled = true }
            return (resumed, commits.problem != previous ? commits.problem : nil, scheduleRetry)
        }
        for waiter in waiters { waiter.resume() }
        if let newProblem { eventContinuation.yield(.failed("state journal: \(newProblem)")) }
        if scheduleRetry { scheduleJournalRetry() }
        return document
    }

    /// Tries the journal again after `retryInterval` while it fails (the disk may recover
    /// without any change coming to write).
    private func scheduleJournalRetry() {
        let delay = timing.retryInterval
        let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        journalQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            let failing = commits.withLock { commits -> Bool in
                commits.retryScheduled = false
                return commits.problem != nil
            }
            if failing { requestAppend(waiter: nil) }
        }
    }

    /// The state now: the source's snapshot, else the last submitted document.
    private func snapshot() -> StateDocument? {
        let (source, submitted) = state.withLock { ($0.source, $0.submitted) }
        if let source { return source() }
        return submitted
    }

    /// A document as the journal records it: without the presets, which follow from the profile.
    private func journalRecord(_ document: StateDocument) -> Data {
        var record = document
        record.presets = []
        return record.encoded(descriptors: descriptors)
    }

    // MARK: state.json

    /// Writes the latest state now (if not written yet) and waits for the disk.
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

    /// Writes the state as it is now, if a change is pending. Runs on the writer queue.
    ///
    /// Compaction: on the journal queue (so no other append comes between) a snapshot is taken
    /// and appended, so the journal's last record is never older than `state.json`; then
    /// `state.json` is committed; then, back on the journal queue, the journal is removed, or
    /// cut down to its newest record when appends came after the snapshot.
    private func writePending() {
        let (pending, currentIsGood) = state.withLock { state -> (Bool, Bool) in
            let pending = state.pending
            state.pending = false
            state.schedule.taken()
            return (pending, state.currentIsGood)
        }
        guard pending else { return }
        let (snapshot, appendsBefore) = journalQueue.sync { () -> (StateDocument?, Int) in
            let target = commits.withLock { $0.requested }
            let document = appendSnapshot(covering: target)
            return (document, commits.withLock { $0.appendCount })
        }
        guard var document = snapshot else { return }
        if let presets = state.withLock({ $0.presets }) { document.presets = presets(document) }
        do {
            try document.validate(descriptors: descriptors, file: "state")
        } catch {
            // Never write what `load` would reject: the file keeps the last good state.
            fail("state not saved: \(error.problems.map(\.description).joined(separator: "; "))", retry: false)
            return
        }
        do {
            try persist(document.encoded(descriptors: descriptors), keepingPrevious: currentIsGood)
        } catch {
            fail(error.message, retry: true)
            return
        }
        // The journal's records up to the snapshot are in `state.json` now (also when the
        // snapshot's own append failed): only newer ones are kept.
        let journalFailure = journalQueue.sync { () -> String? in
            let newer = commits.withLock { $0.appendCount } != appendsBefore
            do throws(FileError) {
                try journal.compact(keepingLast: newer)
                return nil
            } catch {
                return error.message
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

    /// Records a failed write (an event when it is a new problem); with `retry` the state is
    /// written again after the quiet period (a writer is started if none runs), so a disk that
    /// recovers gets it without a change.
    private func fail(_ message: String, retry: Bool) {
        let now = clock.now()
        let (startWriter, isNew) = state.withLock { state -> (Bool, Bool) in
            let isNew = state.lastError != message
            state.lastError = message
            guard retry, !state.pending else { return (false, isNew) }
            state.pending = true
            state.schedule.changed(at: now)
            guard !state.writerRunning else { return (false, isNew) }
            state.writerRunning = true
            return (true, isNew)
        }
        // A disk that stays full is reported once, not after every retry.
        if isNew { eventContinuation.yield(.failed(message)) }
        if startWriter {
            Task.detached { [self] in await runWriter() }
        }
    }
}
