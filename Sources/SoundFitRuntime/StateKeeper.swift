import Foundation
import Synchronization
import SoundFitModel
import SoundFitDSP
import SoundFitHearing
import SoundFitProcessing
import SoundFitState

/// Patches and durable state for a running SoundFit: loads, saves and deletes patches, tracks
/// the current patch, and persists every applied change (debounced, atomic) so that a restart
/// — also after `kill -9` — comes back with the last applied state; keeps the document-level
/// settings (`document.json`: calibration, channels, OSC). Its owner runs `run()`.
///
/// Session values wait for a session: the restored ones, and a patch's loaded while no session
/// is active (the patch's kernel values apply at once). The runtime hands each new session to
/// the keeper first (`SoundFitRuntime.onSessionStart`), which requests them then. A profile's
/// recommendation waiting for a session (`SoundFitRuntime.recommendationPending`) is persisted
/// too, so a restart does not lose it.
///
/// Thread rules: any thread except the audio thread.
public final class StateKeeper: Sendable {
    public let library: PatchLibrary
    public let store: DurableStateStore
    private let runtime: SoundFitRuntime
    private let state: Mutex<State>
    private let currentPatchChanges: @Sendable (CurrentPatch?) -> Void
    /// Told after every save or delete of a user patch (`onLibraryChange`).
    private let libraryObservers = Mutex<[@Sendable () -> Void]>([])
    /// Subscribed at creation, followed by `run()`.
    private let changes: AsyncStream<ParameterChange<ParameterValue>>
    private let sessions: AsyncStream<ProcessingSession?>
    /// Finishes when the last load queued has finished: loads run one at a time.
    private let loadTurn = Mutex<Task<Void, Never>?>(nil)

    private struct State {
        var tracker: CurrentPatchTracker
        /// The last applied value of every writable parameter (kept while no session exists).
        var values: [String: ParameterValue]
        /// Session values waiting for the next session: restored ones, or a patch's.
        var pendingSessionValues: [(String, ParameterValue)]
        /// Session values being restored, each until its request ends: a snapshot taken
        /// meanwhile (the new session holds its defaults) keeps them, not the defaults.
        var restoringSessionValues: [String: ParameterValue] = [:]
        /// `document.json` as written last (its calibration is the runtime's).
        var documentSettings: DocumentSettings
        /// The MIDI control mappings (`MIDIControl` changes them, the state keeps them).
        var midiMappings: [MIDIMapping]
    }

    /// The writable parameters, the ones a patch or the state file sets.
    public static var writableDescriptors: [ParameterDescriptor] { ParameterModel.writable }

    /// The kernel values of a state document, for the engine to start with.
    public static func chainSettings(_ document: StateDocument) -> ChainSettings {
        var settings = ChainSettings()
        for entry in ParameterModel.kernels {
            if let slot = entry.binding?.engineSlot, let value = document.parameters[entry.address] {
                slot.store(slot.encode(value), into: &settings)
            }
        }
        return settings
    }

    /// Takes over a runtime whose engine was created with `chainSettings(document)`: restores
    /// the delivery configuration, session configuration and hearing profile at once, and the
    /// session's values when the first session starts. `documentSettings`: what
    /// `saveDocumentSettings()` writes (with the runtime's calibration). `currentPatchChanged`
    /// hears every change of the current patch or of `sessionValuesPending` (to notify
    /// subscribers).
    public init(runtime: SoundFitRuntime, library: PatchLibrary, store: DurableStateStore, restoring document: StateDocument,
                documentSettings: DocumentSettings = DocumentSettings(),
                currentPatchChanged: @escaping @Sendable (CurrentPatch?) -> Void) {
        self.runtime = runtime
        self.library = library
        self.store = store
        currentPatchChanges = currentPatchChanged
        runtime.config = document.delivery
        runtime.sessionConfiguration = document.session
        if let profile = document.hearingProfile { runtime.presets.setProfile(profile) }
        runtime.restoreRecommendationPending(document.recommendationPending)
        let restoredPatch = document.currentPatch.flatMap { try? library.patch(.number($0.number)) }
        let sessionAddresses = SessionParameter.Name.applicationOrder.map { ParameterModel.entry(for: $0).address }
        state = Mutex(State(
            tracker: CurrentPatchTracker(restoring: document.currentPatch, patch: restoredPatch, values: document.parameters),
            values: document.parameters,
            pendingSessionValues: sessionAddresses.compactMap { address in document.parameters[address].map { (address, $0) } },
            documentSettings: documentSettings, midiMappings: document.midiMappings))
        changes = runtime.changeUpdates()
        sessions = runtime.controller.sessionUpdates()
        runtime.onSessionStart { [weak self] session in await self?.restoreSessionValues(session) }
        runtime.onRecommendationPendingChange { [weak self] in await self?.persistJournaled() }
        // Applied means persisted: the store snapshots what the parameters hold, and every
        // request waits for the journal before it is reported applied.
        store.follow({ [weak self] in self?.snapshot() }, presets: { [weak self] document in
            self?.presets(for: document) ?? []
        })
        runtime.persistAppliedValues { [store] in await store.journaled() }
    }

    /// Persists every applied change and every session change, and tracks the current patch,
    /// until cancelled. Run by the owner of the keeper; the changes are followed from the
    /// keeper's creation on, so none is missed before.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.followChanges() }
            group.addTask { await self.followSessions() }
        }
    }

    private func followChanges() async {
        for await change in changes {
            let (patchChanged, current) = state.withLock { state -> (Bool, CurrentPatch?) in
                guard state.values[change.address] != nil || Self.isWritable(change.address) else { return (false, nil) }
                state.values[change.address] = change.value
                return (state.tracker.valueApplied(change.value, at: change.address), state.tracker.current)
            }
            if patchChanged { currentPatchChanges(current) }
            // The request that made the change waited for the journal already.
            store.changed(journaling: false)
        }
    }

    private func followSessions() async {
        for await _ in sessions {
            persist()
        }
    }

    private static func isWritable(_ address: String) -> Bool {
        writableDescriptors.contains { $0.address == address }
    }

    /// Requests the session values waiting for a session once, in the order preset, intensity,
    /// enabled, and waits for their end; then subscribers hear that nothing is pending.
    private func restoreSessionValues(_ session: ProcessingSession) async {
        let pending = state.withLock { state -> [(String, ParameterValue)] in
            defer { state.pendingSessionValues = [] }
            for (address, value) in state.pendingSessionValues { state.restoringSessionValues[address] = value }
            return state.pendingSessionValues
        }
        guard !pending.isEmpty else { return }
        for (address, value) in pending {
            defer { _ = state.withLock { $0.restoringSessionValues.removeValue(forKey: address) } }
            if address == ParameterModel.processingPreset.address, value != .choice(PresetVariant.noneName),
               runtime.presets.profile == nil { continue }
            guard let control = runtime.parameter(at: address), let request = try? control.request(value, origin: nil) else { continue }
            for await _ in request.states {}
        }
        currentPatchChanges(currentPatch)
    }

    /// Whether session values wait for the next session (`/patch/current` reports it): a patch
    /// was loaded while no session was active, or restored values wait for the first session.
    public var sessionValuesPending: Bool { state.withLock { !$0.pendingSessionValues.isEmpty } }

    // MARK: Persistence

    /// The complete state now.
    public var document: StateDocument {
        let (values, current) = state.withLock { ($0.values, $0.tracker.current) }
        let session = runtime.controller.session?.configuration ?? runtime.sessionConfiguration
        let profile = runtime.presets.profile
        let presets = profile.map { PresetGenerator.presets(for: $0, techLevel: session.techLevel, calibration: runtime.calibration) } ?? []
        var document = StateDocument(parameters: values, delivery: runtime.config, session: session, currentPatch: current,
                                     hearingProfile: profile, presets: presets)
        document.midiMappings = midiMappings
        document.recommendationPending = runtime.recommendationPending
        return document
    }

    /// The MIDI control mappings kept in the state (restored ones until `MIDIControl` changes them).
    public var midiMappings: [MIDIMapping] { state.withLock { $0.midiMappings } }

    /// Keeps new MIDI control mappings in the state and schedules a write.
    public func setMIDIMappings(_ mappings: [MIDIMapping]) {
        state.withLock { $0.midiMappings = mappings }
        persist()
    }

    /// Schedules a (debounced, atomic) write of the current state; the journal gets it within
    /// a moment.
    public func persist() {
        store.changed()
    }

    /// Schedules a write of the current state and returns once the journal has it (or the
    /// append failed: `persistenceProblem`), for a change reported as done only after that.
    public func persistJournaled() async {
        store.changed(journaling: false)
        await store.journaled()
    }

    /// Why the state is not persisted now, nil when it is (see
    /// `DurableStateStore.persistenceProblem`).
    public var persistenceProblem: String? { store.persistenceProblem }

    /// The state as it is now, without presets, for the store (called on its journal queue, so
    /// quick: reads only): what every parameter holds (a value a session waits for, while it
    /// waits), the current patch as of those values, and the rest of the keeper's and the
    /// runtime's state.
    private func snapshot() -> StateDocument {
        var values = appliedValues
        let (current, mappings) = state.withLock { state -> (CurrentPatch?, [MIDIMapping]) in
            for (address, value) in state.pendingSessionValues { values[address] = value }
            values.merge(state.restoringSessionValues) { _, restoring in restoring }
            var tracker = state.tracker
            tracker.update(values: values)
            return (tracker.current, state.midiMappings)
        }
        let session = runtime.controller.session?.configuration ?? runtime.sessionConfiguration
        var document = StateDocument(parameters: values, delivery: runtime.config, session: session, currentPatch: current,
                                     hearingProfile: runtime.presets.profile, presets: [])
        document.midiMappings = mappings
        document.recommendationPending = runtime.recommendationPending
        return document
    }

    /// The informational presets of `document` (its profile, for its tech level, at the
    /// calibration and calibration table now), for the store's `state.json` writes (its writer queue).
    private func presets(for document: StateDocument) -> [PresetPayload] {
        document.hearingProfile.map {
            PresetGenerator.presets(for: $0, techLevel: document.session.techLevel, calibration: runtime.calibration)
                .map { $0.corrected(by: runtime.calibrationTable) }
        } ?? []
    }

    // MARK: Document settings

    /// Writes `document.json` (the settings given at creation, with the runtime's calibration).
    public func saveDocumentSettings() throws {
        let settings = state.withLock { state in
            state.documentSettings.calibration = runtime.calibration
            return state.documentSettings
        }
        try AtomicFile.write(settings.encoded(), to: store.directory.appendingPathComponent(DocumentSettings.fileName))
    }

    /// Changes the calibration (`SoundFitRuntime.setCalibration`) and saves it in
    /// `document.json`, also when the regenerated preset could not be applied (that error is
    /// thrown after saving).
    public func setCalibration(_ calibration: Double) async throws {
        var failure: (any Error)?
        do {
            try await runtime.setCalibration(calibration)
        } catch {
            failure = error
        }
        try saveDocumentSettings()
        if let failure { throw failure }
    }

    // MARK: Patches

    /// The current patch, its modified flag as of the values the parameters hold now: the
    /// change feed that keeps the tracker (and tells subscribers) arrives a moment after a change
    /// is reported `applied`, so a query right after a set would otherwise answer stale.
    public var currentPatch: CurrentPatch? {
        let values = appliedValues
        return state.withLock { state in
            var tracker = state.tracker
            tracker.update(values: values)
            return tracker.current
        }
    }

    /// Loads a patch whole or not at all: the patch becomes current only when every value it
    /// sets was applied, and a load that fails changes nothing.
    ///
    /// 1. Refused before anything is requested when it cannot succeed (`patchToLoad`: a hearing
    ///    profile or preset variant missing; every value is checked like a request, the enable
    ///    against the patch's own preset, which step 2 finds applied).
    /// 2. Requested in the steps of `Patch.loadingSteps`: everything but a `true`
    ///    `/processing/enabled` in one batch (kernels in one audio cycle), then, once all of it
    ///    was applied, that enable (it needs the patch's preset in place).
    /// 3. When a value fails anyway (a delivery timeout, an interruption that began meanwhile),
    ///    every value the load changed is requested back to what it was before the load, in the
    ///    same steps; the current patch never changed. The error says what failed, and what
    ///    could not be restored if anything.
    ///
    /// Loads run one at a time (a restore must not undo another load). While no session is
    /// active, its kernel values are applied and its session values wait for the next session
    /// (`sessionValuesPending`), which gets them before anything else.
    public func loadPatch(_ reference: PatchReference) async throws -> Patch {
        try await inLoadTurn { try await self.apply(try self.patchToLoad(reference)) }
    }

    /// The patch `reference` names, when loading it can succeed now; otherwise why not (a
    /// surface checks this before performing anything of a bundle; `loadPatch` checks again).
    public func patchToLoad(_ reference: PatchReference) throws -> Patch {
        let patch = try library.patch(reference)
        if patch.needsHearingProfile, runtime.presets.profile == nil {
            throw ControlError("patch \(patch.number) '\(patch.name)' uses a personalization preset: submit a hearing profile first (/profile/audiogram)")
        }
        let session = runtime.controller.session
        if let name = patch.personalizationPresetVariant, let variant = PresetVariant(rawValue: name) {
            let configuration = session?.configuration ?? runtime.sessionConfiguration
            guard configuration.personalization.variants.contains(variant) else {
                throw ControlError(ProcessingError.presetVariantUnavailable(variant).description)
            }
            let available = runtime.presets.availableVariants(for: configuration.techLevel)
            guard available.contains(variant) else {
                throw ControlError("patch \(patch.number) '\(patch.name)' uses preset variant \(variant), which this hearing profile does not offer (available: \(available.map(\.rawValue).joined(separator: " ")))")
            }
        }
        return patch
    }

    /// Runs `work` after every load queued before it has finished.
    private func inLoadTurn<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = loadTurn.withLock { tail -> Task<T, any Error> in
            let previous = tail
            let task = Task {
                await previous?.value
                return try await work()
            }
            tail = Task { _ = try? await task.value }
            return task
        }
        return try await task.value
    }

    /// The controls and values of each loading step of `values` (`Patch.loadingSteps`); session
    /// values go to `waiting` instead when no session is active.
    private func controlSteps(of values: [String: ParameterValue], session: ProcessingSession?)
        -> (steps: [[(any ControlParameter, ParameterValue)]], waiting: [(String, ParameterValue)]) {
        var steps: [[(any ControlParameter, ParameterValue)]] = []
        var waiting: [(String, ParameterValue)] = []
        for step in Patch.loadingSteps(of: values, descriptors: Self.writableDescriptors) {
            var controls: [(any ControlParameter, ParameterValue)] = []
            for (address, value) in step {
                guard let control = runtime.parameter(at: address) else { continue }
                if session == nil, control.descriptor.binding?.isSession == true {
                    waiting.append((address, value))
                } else {
                    controls.append((control, value))
                }
            }
            if !controls.isEmpty { steps.append(controls) }
        }
        return (steps, waiting)
    }

    /// Throws why a value of `patch` would be refused now. A `true` enable is checked against
    /// the patch's own preset (applied by the step before it), not the preset applied now.
    private func check(_ steps: [[(any ControlParameter, ParameterValue)]], of patch: Patch, session: ProcessingSession?) throws {
        let enabledAddress = ParameterModel.processingEnabled.address
        for (control, value) in steps.joined() {
            if control.descriptor.address == enabledAddress, value == .bool(true), let session,
               patch.personalizationPresetVariant != nil {
                // Interrupted: enabling is refused (the patch's preset does not change that).
                try ControlError.refusing { try session.isEnabled.check(true) }
            } else {
                try control.check(value)
            }
        }
    }

    /// Requests `step` in one batch and waits for every request's end; returns what failed.
    /// A value superseded by a newer request (another client's change made while the patch
    /// loads) is no failure: the newer value wins, and the patch reads as modified. Every value
    /// was checked (`check(_:of:session:)`) or was applied before (a rollback's).
    private func request(_ step: [(any ControlParameter, ParameterValue)]) async
        -> (failures: [String], superseded: Set<String>) {
        var failures: [String] = []
        var superseded: Set<String> = []
        for (result, (control, _)) in zip(runtime.requestBatch(step, origin: nil, checked: true), step) {
            switch result {
            case .success(let request):
                var last: ParameterUpdateState<ParameterValue>?
                for await state in request.states { last = state }
                if let last, last.name == .superseded {
                    superseded.insert(control.descriptor.address)
                } else if let last, last.name != .applied {
                    failures.append("\(control.descriptor.address): \(last.name) \(last.reason ?? "")")
                }
            case .failure(let error):
                failures.append("\(control.descriptor.address): \(error)")
            }
        }
        return (failures, superseded)
    }

    /// Applies `patch` (see `loadPatch`); the patch becomes current when all its values were
    /// applied. Without a session, its `/processing/*` values wait for the next one.
    private func apply(_ patch: Patch) async throws -> Patch {
        let session = runtime.controller.session
        let (steps, waiting) = controlSteps(of: patch.parameters, session: session)
        try check(steps, of: patch, session: session)
        let before = appliedValues
        var failures: [String] = []
        var superseded: Set<String> = []
        for step in steps {
            let outcome = await request(step)
            failures = outcome.failures
            superseded.formUnion(outcome.superseded)
            guard failures.isEmpty else { break }
            do {
                try await afterLoadStep.withLock({ $0 })?()
            } catch {
                failures = ["\(error)"]
                break
            }
        }
        guard failures.isEmpty else {
            let unrestored = await restore(before, loaded: patch.parameters, session: session)
            throw ControlError("patch \(patch.number) '\(patch.name)' was not applied: \(failures.joined(separator: "; ")); "
                + (unrestored.isEmpty ? "every value is back to what it was before the load"
                    : "restoring the values from before the load failed too: \(unrestored.joined(separator: "; "))"))
        }
        let current = state.withLock { state -> CurrentPatch? in
            for (address, value) in patch.parameters where !superseded.contains(address) { state.values[address] = value }
            if !waiting.isEmpty { state.pendingSessionValues = waiting }
            _ = state.tracker.select(patch, values: state.values)
            return state.tracker.current
        }
        currentPatchChanges(current)
        await persistJournaled()
        // A session that started meanwhile did not see these values: it gets them now.
        if !waiting.isEmpty, let session = runtime.controller.session { await restoreSessionValues(session) }
        return patch
    }

    /// Requests the values the load put in place (`loaded`, where they differ from `before`)
    /// back to `before`, in loading steps (a failed load's undo); a value another client
    /// changed meanwhile stays. Returns what could not be restored.
    private func restore(_ before: [String: ParameterValue], loaded: [String: ParameterValue],
                         session: ProcessingSession?) async -> [String] {
        let now = appliedValues
        var changed: [String: ParameterValue] = [:]
        for (address, value) in loaded {
            if let old = before[address], now[address] == value, value != old { changed[address] = old }
        }
        var failures: [String] = []
        for step in controlSteps(of: changed, session: session).steps {
            failures += await request(step).failures
        }
        return failures
    }

    /// Tests only: runs after each step of a load was applied; throwing fails the load there
    /// (or it makes the next step fail), to see the restore.
    let afterLoadStep = Mutex<(@Sendable () async throws -> Void)?>(nil)

    /// Saves the current values of every writable parameter as a user patch (number < 0).
    public func savePatch(name: String) throws -> Patch {
        let values = appliedValues
        let patch = try library.save(name: name, parameters: values)
        let current = state.withLock { state -> CurrentPatch? in
            _ = state.tracker.select(patch, values: values)
            return state.tracker.current
        }
        currentPatchChanges(current)
        persist()
        libraryChanged()
        return patch
    }

    /// Writes the complete state now, with what every parameter holds now, atomically
    /// (`state.json`, through the durable store) together with `document.json`, and waits for the
    /// disk: a session manager's save. Returns the parameter values written.
    @discardableResult
    public func save() async throws -> [String: ParameterValue] {
        let values = appliedValues
        store.changed()
        try await store.flush()
        try saveDocumentSettings()
        return values
    }

    /// Every writable parameter's applied value: what the parameter holds now (a change reported
    /// `applied` reaches the keeper's own map from the change feed a moment later), else the
    /// value kept for it (a session value while no session is active).
    public var appliedValues: [String: ParameterValue] {
        var values = state.withLock { $0.values }
        for descriptor in Self.writableDescriptors {
            if let value = try? runtime.parameter(at: descriptor.address)?.currentValue() { values[descriptor.address] = value }
        }
        return values
    }

    /// Deletes a user patch (factory patches are read-only).
    public func deletePatch(_ reference: PatchReference) throws -> Patch {
        let patch = try library.delete(reference)
        let (changed, current) = state.withLock { state in
            (state.tracker.forget(number: patch.number), state.tracker.current)
        }
        if changed { currentPatchChanges(current) }
        persist()
        libraryChanged()
        return patch
    }

    /// The name of every loadable patch, factory then user, in `/patch/list` order.
    public var patchNames: [String] { library.patches.map(\.name) }

    /// The name of every user patch (the ones that can be deleted), in `/patch/list` order.
    public var userPatchNames: [String] { library.userPatches.map(\.name) }

    /// Calls `observer` after every save or delete of a user patch, whoever asked for it (any
    /// transport, the web page), on the thread that saved or deleted: the OSCQuery server tells
    /// its WebSockets that `/patch/load`'s choices changed.
    public func onLibraryChange(_ observer: @escaping @Sendable () -> Void) {
        libraryObservers.withLock { $0.append(observer) }
    }

    private func libraryChanged() {
        for observer in libraryObservers.withLock({ $0 }) { observer() }
    }
}
