import Synchronization
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitProcessing

/// SoundFit's control plane: the processing model (controller, session, parameters) wired to
/// the audio engine, and the address space that control surfaces use.
///
/// - Kernel parameters (`KernelParameter`) go straight to the audio engine's mailbox.
/// - The session's parameters (`ProcessingParameter`s of the processing model) go to the engine
///   through `EngineProcessingHandler`.
/// - The session follows the audio system: `audioSystemConnected()` activates it (with the
///   configured tech level and personalization mode) and brings every applicator up to date;
///   `audioSystemDisconnected()` deactivates it and marks the engine's applicators out of date.
///   The controller keeps the values in between, so a reconnection loses nothing.
/// - Session operations (those two and `/session/activate`, `/session/deactivate`) run one at a
///   time in the order they were requested (`SessionOperations`). Each started session gets,
///   in order: the values held for it (`onSessionStart`, the state keeper's), a pending
///   profile recommendation, and the invalidations it brings (`invalidationUpdates()`).
///
/// Thread rules: any thread except the audio thread.
public final class SoundFitRuntime: Sendable {
    public let engine: AudioEngine
    public let controller: ProcessingController
    public let presets: ProfilePresetSource
    /// Every control parameter in address-space order: the session's, then the kernels'.
    public let parameters: [any ControlParameter]
    private let kernels: [KernelParameter]
    /// The session's parameters, each listed once: here its control is made.
    private let sessionControls: [any SessionControlParameter]
    private let handler: EngineProcessingHandler
    private let byAddress: [String: any ControlParameter]
    private let feed: ChangeFeed
    private let invalidations = Subscribers<ParameterInvalidation>()
    private let operations = SessionOperations()
    /// Keeps kernel values in acceptance order between single requests and batches.
    private let turn: HandOverTurn
    private let lifecycle: Mutex<Lifecycle>
    /// Makes `updateProfile`'s read-change-write of the profile one step.
    private let profileUpdates = Mutex<Void>(())

    private struct Lifecycle {
        /// The output safety limit, dB SPL through the calibration.
        var maximumOutputSPL = SoundFitRuntime.defaultMaximumOutputSPL
        /// Per-ear, per-frequency corrections from a meter (`/calibration/measured`).
        var calibrationTable = CalibrationTable()
        /// Each ear's maximum output derived from the preset in force (nil: none installed).
        var earMaxima: EarMaxima?
        var connected = false
        /// The configuration the next session is activated with.
        var sessionConfiguration: ProcessingConfiguration
        /// A user deactivated the session: reconnecting does not re-activate it.
        var deactivatedByUser = false
        /// A hearing profile was submitted while no session was active: its recommendation is
        /// applied when the next session starts (the state keeper persists it).
        var recommendationPending = false
        /// Connections to an audio system so far (the second is a server lost and back).
        var connections = 0
        /// The sample rate of the last connection, when reported.
        var sampleRate: Int?
        /// The tech level of the last session started.
        var lastTechLevel: TechLevel?
        /// Runs first when a session starts (the state keeper restores its values).
        var sessionStart: (@Sendable (ProcessingSession) async -> Void)?
        /// Told when `recommendationPending` changed (the state keeper persists it).
        var recommendationPendingChanged: (@Sendable () async -> Void)?
    }

    /// `ceiling`: the output safety limit fixed for the runtime's life (`OutputCeiling`); the
    /// maximum output starts at the default, or at the ceiling when that is lower.
    public init(engine: AudioEngine, sessionConfiguration: ProcessingConfiguration,
                config: DeliveryConfiguration = .default, presets: ProfilePresetSource = ProfilePresetSource(),
                ceiling: OutputCeiling = .unbounded, clock: any Clock<Duration> = ContinuousClock()) {
        self.engine = engine
        self.presets = presets
        self.ceiling = ceiling
        lifecycle = Mutex(Lifecycle(sessionConfiguration: sessionConfiguration))
        // The handler reads the controller's delivery timeout; the controller needs the handler.
        let timeoutBox = DeliveryTimeout(config.deliveryTimeout)
        let handler = EngineProcessingHandler(engine: engine) { timeoutBox.value }
        self.handler = handler
        let controller = ProcessingController(handler: handler, presetSource: presets, config: config, clock: clock)
        self.controller = controller
        let feed = ChangeFeed()
        let turn = HandOverTurn()
        self.feed = feed
        self.turn = turn
        let kernels = ParameterModel.kernels.map {
            KernelParameter($0, engine: engine, config: config, clock: DeliveryClock(clock), feed: feed, turn: turn)
        }
        self.kernels = kernels
        let session = SessionControl.controls(controller: controller, presets: presets)
        sessionControls = session
        parameters = session as [any ControlParameter] + kernels
        byAddress = Dictionary(uniqueKeysWithValues: parameters.map { ($0.descriptor.address, $0) })
        self.timeoutBox = timeoutBox
        sessions = controller.sessionUpdates()
        maximumOutputSPL = min(Self.defaultMaximumOutputSPL, ceiling.maximumOutputSPL)
        handler.observeEarMaxima { [weak self] maxima in self?.setEarMaxima(maxima) }
    }

    // MARK: Output safety limit

    /// The maximum output by default, in dB SPL.
    public static let defaultMaximumOutputSPL = 100.0
    /// The maximum outputs a user may set, in dB SPL.
    public static let maximumOutputRange: ClosedRange<Double> = 40...130

    /// The ceiling fixed at start: `maximumOutputSPL` never goes above it, and the output's
    /// limit in dBFS never above its dBFS, whatever the calibration becomes.
    public let ceiling: OutputCeiling

    /// The output safety limit: no output sample exceeds this level, in dB SPL through the
    /// calibration (the dB SPL a full-scale sine stands for), in every mode and whatever the
    /// stages do — nor the ceiling's dBFS (`outputLimitDBFS`). Applied from the next audio
    /// cycle. Values outside `maximumOutputRange` or above `ceiling` are refused by the surfaces
    /// before they get here (`ceiling.refusal`).
    public var maximumOutputSPL: Double {
        get { lifecycle.withLock { $0.maximumOutputSPL } }
        set {
            precondition(Self.maximumOutputRange.contains(newValue) && newValue <= ceiling.maximumOutputSPL)
            lifecycle.withLock {
                $0.maximumOutputSPL = newValue
                applyOutputLimit($0)
            }
        }
    }

    /// The highest output peak now, dB relative to full scale: the maximum output through the
    /// calibration, clamped at the ceiling's dBFS, less the calibration table's largest
    /// correction (`CalibrationTable.largestCorrection`): the limiter is one for every channel
    /// and band, so it holds the limit in dB SPL for the ear and frequency that play loudest.
    public var outputLimitDBFS: Double {
        lifecycle.withLock { Self.limitDBFS($0, ceiling: ceiling, calibration: presets.calibration) }
    }

    private static func limitDBFS(_ lifecycle: Lifecycle, ceiling: OutputCeiling, calibration: Double) -> Double {
        ceiling.limitDBFS(maximumOutputSPL: lifecycle.maximumOutputSPL, calibration: calibration)
            - lifecycle.calibrationTable.largestCorrection
    }

    /// The output safety limit in real dB SPL at the ear: `maximumOutputSPL`, or less when a
    /// calibration lowered after the start holds the limit at the ceiling's dBFS. The hearing
    /// test presents no tone above it (the limiter would cut it); with a calibration table, the
    /// limiter sits `calibrationTable.largestCorrection` lower in dBFS
    /// (`ToneCalibration.highestHearingLevel(frequency:limitSPL:ear:)`).
    public var effectiveMaximumOutputSPL: Double {
        lifecycle.withLock {
            let calibration = presets.calibration
            return ceiling.limitDBFS(maximumOutputSPL: $0.maximumOutputSPL, calibration: calibration) + calibration
        }
    }

    /// Hands the limits to the engine: each ear's (`earOutputLimitsDBFS`) and the hearing
    /// test's (`outputLimitDBFS`). Called with the lifecycle lock held, after the maximum output,
    /// the calibration or the preset's ear maxima changed: every writer goes through the lock,
    /// so the last store is computed from the latest of all.
    private func applyOutputLimit(_ lifecycle: Lifecycle) {
        let calibration = presets.calibration
        let limit = Self.limitDBFS(lifecycle, ceiling: ceiling, calibration: calibration)
        let ears = Self.earLimitsDBFS(lifecycle, limit: limit, calibration: calibration)
        engine.setOutputCeilings(left: Float(Decibels.amplitude(ears.left)), right: Float(Decibels.amplitude(ears.right)),
                                 hearingTest: Float(Decibels.amplitude(limit)))
    }

    // MARK: Output limit per ear

    /// Each ear's maximum output derived from the preset in force (`MaximumOutput`), dB SPL;
    /// nil while none is installed.
    public var earMaxima: EarMaxima? { lifecycle.withLock { $0.earMaxima } }

    /// Each ear's output limit in force, dB relative to full scale: `outputLimitDBFS`, or the
    /// ear's derived maximum through the calibration (less the calibration table's largest
    /// correction) when that is lower. Outside the hearing test, no sample of an ear exceeds it.
    public var earOutputLimitsDBFS: (left: Double, right: Double) {
        lifecycle.withLock {
            let calibration = presets.calibration
            return Self.earLimitsDBFS($0, limit: Self.limitDBFS($0, ceiling: ceiling, calibration: calibration),
                                      calibration: calibration)
        }
    }

    private static func earLimitsDBFS(_ lifecycle: Lifecycle, limit: Double, calibration: Double) -> (left: Double, right: Double) {
        guard let maxima = lifecycle.earMaxima else { return (limit, limit) }
        let correction = lifecycle.calibrationTable.largestCorrection
        return (min(limit, maxima.left - calibration - correction), min(limit, maxima.right - calibration - correction))
    }

    /// Called before a preset reaches the engine (or is removed): the ears' limits follow it.
    private func setEarMaxima(_ maxima: EarMaxima?) {
        lifecycle.withLock {
            guard $0.earMaxima != maxima else { return }
            $0.earMaxima = maxima
            applyOutputLimit($0)
        }
    }

    // MARK: Calibration table

    /// The per-ear, per-frequency corrections a sound level meter measured (empty: none).
    public var calibrationTable: CalibrationTable { lifecycle.withLock { $0.calibrationTable } }

    /// Replaces the calibration table; the output safety limit follows at once (its largest
    /// correction), and so do the presets: the session's preset is generated again, corrected
    /// per ear and band, and applied (`PresetPayload.corrected(by:)`). The hearing test's tones
    /// use it from the next test on, calibration tones from the next one played. Throws when
    /// the regenerated preset could not be applied (the table is set all the same).
    public func setCalibrationTable(_ table: CalibrationTable) async throws {
        guard storeCalibrationTable(table) else { return }
        if let session = controller.session, session.preset.value != nil {
            try await ControlError.refusing { try await session.preset.load() }
        }
        await invalidate(.calibrationChanged)
    }

    /// Sets the calibration table without regenerating the session's preset: at start, before
    /// any session (the first preset loaded is generated with it).
    public func restoreCalibrationTable(_ table: CalibrationTable) {
        _ = storeCalibrationTable(table)
    }

    /// Stores `table` for the output limit and the presets; false when it is the one in force.
    private func storeCalibrationTable(_ table: CalibrationTable) -> Bool {
        lifecycle.withLock { lifecycle -> Bool in
            guard lifecycle.calibrationTable != table else { return false }
            lifecycle.calibrationTable = table
            presets.calibrationTable = table
            applyOutputLimit(lifecycle)
            return true
        }
    }

    // MARK: Calibration

    /// The calibration: the dB SPL a full-scale sine stands for at the ear. Personalization
    /// presets are generated for it and the output safety limit is reached through it.
    public var calibration: Double { presets.calibration }

    /// Changes the calibration (within `PresetPayload.calibrationRange`, checked by the
    /// surfaces): the output safety limit follows at once, clamped at the ceiling's dBFS (a
    /// lower calibration never raises the output's limit in dBFS above the start's); the
    /// session's preset is generated again for it and applied, and listeners hear that the
    /// preset is stale (`calibrationChanged`). Throws when the regenerated preset could not be
    /// applied.
    public func setCalibration(_ calibration: Double) async throws {
        precondition(PresetPayload.calibrationRange.contains(calibration))
        guard calibration != presets.calibration else { return }
        lifecycle.withLock {
            presets.calibration = calibration
            applyOutputLimit($0)
        }
        if let session = controller.session, session.preset.value != nil {
            try await ControlError.refusing { try await session.preset.load() }
        }
        await invalidate(.calibrationChanged)
    }

    // MARK: Changes

    /// A new stream of every applied change of every parameter, with the requester's origin
    /// when a request named one. When a session is activated, its parameters' values are
    /// published too (a new session is a change for a surface). Buffers without bound: consume it.
    public func changeUpdates() -> AsyncStream<ParameterChange<ParameterValue>> { feed.subscribe() }

    /// Calls `body` with every applied change from now on, on the thread that made it, before
    /// its request is reported applied (see `Subscribers.observe`: quick, non-blocking, never
    /// back into the runtime's parameters). The OSC surface queues value feedback this way, so
    /// `/sync` orders it. End it with `stopObserving(_:)`.
    public func observeChanges(_ body: @escaping @Sendable (ParameterChange<ParameterValue>) -> Void) -> ChangeObservation {
        ChangeObservation(feed.observe(body))
    }

    public func stopObserving(_ observation: ChangeObservation) {
        feed.stopObserving(observation.registration)
    }

    /// The controller's sessions from the runtime's creation on; `run()` follows them.
    private let sessions: AsyncStream<ProcessingSession?>

    /// Publishes every session's values to `changeUpdates()` subscribers when it starts, and
    /// its changes afterwards, through the session controls (the kernels' changes are published
    /// from the runtime's creation on). A change reaches the feed on the thread that made it,
    /// before its request is reported applied, so `/sync` orders the value feedback it causes.
    /// Runs until the task running it is cancelled; the owner (`SoundFitApplication`, or a test)
    /// runs it for the runtime's whole life.
    public func run() async {
        for await session in sessions {
            guard let session else { continue }
            for control in sessionControls { control.publish(session, to: feed) }
        }
    }

    /// The delivery timeout, readable by the engine's applicators without the controller.
    private let timeoutBox: DeliveryTimeout

    /// The delivery configuration (style and timeout) of every parameter.
    public var config: DeliveryConfiguration {
        get { controller.config }
        set {
            controller.config = newValue
            for kernel in kernels { kernel.config = newValue }
            timeoutBox.value = newValue.deliveryTimeout
        }
    }

    /// Makes every request (kernel and session parameters) wait for `persist` before it is
    /// reported `applied`: the state keeper's journal, so "applied" survives a `kill -9`.
    public func persistAppliedValues(with persist: @escaping @Sendable () async -> Void) {
        controller.persistAppliedValues(with: persist)
        for kernel in kernels { kernel.persistAppliedValues(with: persist) }
    }

    /// The control parameter at `address`.
    public func parameter(at address: String) -> (any ControlParameter)? { byAddress[address] }

    // MARK: Lifecycle

    /// The configuration the session is (or will be) activated with.
    public var sessionConfiguration: ProcessingConfiguration {
        get { lifecycle.withLock { $0.sessionConfiguration } }
        set { lifecycle.withLock { $0.sessionConfiguration = newValue } }
    }

    /// Registers what runs first when a session starts, before any recommendation: the state
    /// keeper restores the values it holds for the session (restored at start, or a patch's
    /// loaded while no session was active). One hook; registering again replaces it.
    public func onSessionStart(_ hook: @escaping @Sendable (ProcessingSession) async -> Void) {
        lifecycle.withLock { $0.sessionStart = hook }
    }

    /// The audio system is reachable (connected to a JACK server at `sampleRate`, when known):
    /// brings every engine applicator up to date with the values held and activates the session
    /// (unless a user deactivated it). A connection after the first means the server was lost
    /// and came back: every value is invalidated (`serverLostAndBack`, or `sampleRateChanged`).
    public func audioSystemConnected(sampleRate: Int? = nil) async throws {
        let outcome = operations.enqueue(requested: false) { [self] () -> Result<Void, any Error> in
            do {
                try await connect(sampleRate: sampleRate)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try await outcome?.value.get()
    }

    private func connect(sampleRate: Int?) async throws {
        let (configuration, activate, cause) = lifecycle.withLock { state -> (ProcessingConfiguration, Bool, InvalidationCause?) in
            var cause: InvalidationCause?
            if state.connections > 0 {
                cause = sampleRate != nil && state.sampleRate != nil && sampleRate != state.sampleRate
                    ? .sampleRateChanged : .serverLostAndBack
            }
            state.connected = true
            state.connections += 1
            if let sampleRate { state.sampleRate = sampleRate }
            return (state.sessionConfiguration, !state.deactivatedByUser, cause)
        }
        for kernel in kernels {
            kernel.invalidateEngine()
        }
        await withTaskGroup(of: Void.self) { group in
            for kernel in kernels {
                group.addTask { await kernel.synchronizeEngine() }
            }
        }
        if activate, controller.session == nil {
            try await startSession(configuration)
        }
        if let cause { await invalidate(cause) }
    }

    /// Activates a session and gives it what it is owed (see the type's documentation).
    /// `requested`: a user asked for it, so later reconnections use its configuration.
    @discardableResult
    private func startSession(_ configuration: ProcessingConfiguration, requested: Bool = false) async throws -> ProcessingSession {
        let session = try await ControlError.refusing { try await controller.activate(configuration: configuration) }
        let (hook, previousTechLevel) = lifecycle.withLock { state in
            defer { state.lastTechLevel = session.techLevel }
            if requested {
                state.sessionConfiguration = configuration
                state.deactivatedByUser = false
            }
            return (state.sessionStart, state.lastTechLevel)
        }
        await hook?(session)
        try await applyPendingRecommendation()
        if let previousTechLevel, previousTechLevel != session.techLevel { await invalidate(.techLevelChanged) }
        return session
    }

    /// Applies the recommendation of a profile submitted while no session was active. It stops
    /// being pending only once followed (or refused), so a restart meanwhile does not lose it.
    private func applyPendingRecommendation() async throws {
        guard lifecycle.withLock({ $0.recommendationPending }), controller.session != nil else { return }
        var failure: (any Error)?
        do {
            try await ControlError.refusing { try await controller.recommend(for: .hearingProfileSubmitted) }
        } catch {
            failure = error
        }
        await setRecommendationPending(false)
        if let failure { throw failure }
    }

    /// Whether the recommendation of a hearing profile submitted while no session was active
    /// waits for the next session. The state keeper persists it, so it survives a restart.
    public var recommendationPending: Bool { lifecycle.withLock { $0.recommendationPending } }

    /// Restores `recommendationPending` from a state kept across a restart (the state keeper, at
    /// start, before the first session): the next session follows the recommendation.
    public func restoreRecommendationPending(_ pending: Bool) {
        lifecycle.withLock { $0.recommendationPending = pending }
    }

    /// Registers what is told after `recommendationPending` changed; the change counts as made
    /// once it returned (the state keeper journals it). One hook; registering again replaces it.
    public func onRecommendationPendingChange(_ hook: @escaping @Sendable () async -> Void) {
        lifecycle.withLock { $0.recommendationPendingChanged = hook }
    }

    private func setRecommendationPending(_ pending: Bool) async {
        let hook = lifecycle.withLock { state -> (@Sendable () async -> Void)? in
            guard state.recommendationPending != pending else { return nil }
            state.recommendationPending = pending
            return state.recommendationPendingChanged
        }
        await hook?()
    }

    /// Activates a session on request (`/session/activate`): needs the audio system, and no
    /// active session. Later reconnections use this configuration. Runs in its turn among the
    /// session operations; `answer` is called inside that turn, so the outcome it is given is
    /// this request's own (a deactivation requested after it runs only afterwards). Refused
    /// at once when `SessionOperations.capacity` operations are waiting. One form only, with
    /// an answer: the request must take its turn when it is made (on the OSC receive thread,
    /// that is arrival order), which an `async` call made from a new task would not.
    public func activateSession(_ configuration: ProcessingConfiguration,
                                answer: @escaping @Sendable (Result<ProcessingSession, any Error>) -> Void) {
        let queued = operations.enqueue { [self] in
            do {
                guard isAudioSystemConnected else {
                    throw ControlError("not connected to a JACK server: a session exists only while SoundFit is")
                }
                answer(.success(try await startSession(configuration, requested: true)))
            } catch {
                answer(.failure(error))
            }
        }
        if queued == nil { answer(.failure(SessionOperations.busy)) }
    }

    /// Deactivates the session on request (`/session/deactivate`); it stays inactive across
    /// reconnections until activated again. Runs in its turn among the session operations;
    /// `answer` is called inside it. Refused (`answer` gets the error) when
    /// `SessionOperations.capacity` operations are waiting.
    public func deactivateSession(answer: @escaping @Sendable ((any Error)?) -> Void) {
        let queued = operations.enqueue { [self] in
            lifecycle.withLock { $0.deactivatedByUser = true }
            await controller.deactivate()
            answer(nil)
        }
        if queued == nil { answer(SessionOperations.busy) }
    }

    /// The audio system went away: deactivates the session (its values are kept) and marks the
    /// engine's applicators out of date, so they are re-applied when it returns.
    public func audioSystemDisconnected() async {
        await operations.enqueue(requested: false) { [self] in
            lifecycle.withLock { $0.connected = false }
            for kernel in kernels {
                kernel.invalidateEngine()
            }
            await controller.deactivate()
        }?.value
    }

    // MARK: Invalidation

    /// A new stream of every invalidation from now on: values that became stale, and why.
    /// Buffers without bound: consume it.
    public func invalidationUpdates() -> AsyncStream<ParameterInvalidation> { invalidations.subscribe() }

    /// Calls `body` with every invalidation from now on, on the thread that made it, before the
    /// request that caused it is answered (quick, non-blocking). End it with `stopObserving(_:)`.
    public func observeInvalidations(_ body: @escaping @Sendable (ParameterInvalidation) -> Void) -> InvalidationObservation {
        InvalidationObservation(invalidations.observe(body))
    }

    public func stopObserving(_ observation: InvalidationObservation) {
        invalidations.stopObserving(observation.registration)
    }

    /// The processing controller recovers the session's state in the engine for the session
    /// parameters `cause` makes stale (re-reads and re-applies them), then listeners hear of
    /// every stale address.
    private func invalidate(_ cause: InvalidationCause) async {
        let stale = cause.stale
        let names = Set(stale.compactMap(\.name))
        if !names.isEmpty { await controller.invalidate(parameters: names, cause: cause) }
        invalidations.yield(ParameterInvalidation(addresses: stale.map(\.descriptor.address), cause: cause))
    }

    /// Whether the audio system is connected, as last reported.
    public var isAudioSystemConnected: Bool { lifecycle.withLock { $0.connected } }

    // MARK: Requests

    /// Requests several changes that belong together (an OSC bundle, a patch). The kernel values
    /// handed over at once (continuous delivery) are published to the audio thread as one batch
    /// (each value once), so they take effect in the same audio cycle; each change reports its
    /// own update states. Each result is the request or why it was refused.
    ///
    /// `checked`: the caller had every value accepted by its control's `check(_:)` just before
    /// (a surface does, so that one refused set stops a whole bundle). A kernel parameter then
    /// takes its value without validating it again (its entry does not change in between: the
    /// value is validated once); a session parameter checks again, since the session may have.
    public func requestBatch(_ changes: [(any ControlParameter, ParameterValue)], origin: RequestOrigin?,
                             checked: Bool = false) -> [Result<ParameterRequest<ParameterValue>, any Error>] {
        let batch = changes.count(where: { $0.0 is KernelParameter }) > 1 ? EngineBatch() : nil
        return turn.take {
            defer { batch?.publish(to: engine) }
            return changes.map { control, value in
                Result {
                    guard let kernel = control as? KernelParameter else { return try control.request(value, origin: origin) }
                    return try kernel.request(value, origin: origin, at: nil, joining: batch, checked: checked)
                }
            }
        }
    }

    /// `requestBatch(_:origin:)` for changes that take effect at `time`: the kernel values are
    /// scheduled in the engine as one batch and the audio thread applies them at the frame of
    /// the cycle that contains that moment; each request reports `applying` at once and ends
    /// when that cycle acknowledged it, its timeout counting from `time`. Only kernel parameters
    /// can be scheduled (`isSchedulable`); any other is refused. With discrete delivery each
    /// value is scheduled once it has settled.
    public func requestBatch(_ changes: [(any ControlParameter, ParameterValue)], origin: RequestOrigin?,
                             at time: EngineTime, checked: Bool = false) -> [Result<ParameterRequest<ParameterValue>, any Error>] {
        turn.take {
            let batch = EngineBatch(time: time)
            defer { batch.publish(to: engine) }
            return changes.map { control, value in
                Result {
                    guard let kernel = control as? KernelParameter else {
                        throw ControlError("\(control.descriptor.address) cannot be scheduled: it takes effect at once only")
                    }
                    return try kernel.request(value, origin: origin, at: time, joining: batch, checked: checked)
                }
            }
        }
    }

    /// Whether `control` can take a change at a moment (`requestBatch(_:origin:at:)`): the
    /// kernel parameters (filter, ring modulator, output gain) can.
    public func isSchedulable(_ control: any ControlParameter) -> Bool { control is KernelParameter }

    /// Whether the engine has room for one more scheduled batch now.
    public var canSchedule: Bool { engine.canSchedule }

    /// How many scheduled batches can wait for their moment at once.
    public static var scheduleCapacity: Int { ScheduledChanges.capacity }

    // MARK: Hearing profile

    /// A new hearing profile: presets are generated from it, and the recommendation for a
    /// submitted profile follows (default preset, processing enabled, recommended intensity) —
    /// at once, or, without an active session, when the next one starts.
    /// Returns the available variants for the session's tech level.
    @discardableResult
    public func submitProfile(_ profile: HearingProfile) async throws -> [PresetVariant] {
        try await profileChanged(replacing: updateProfile { _ in profile }.replacing)
    }

    /// Sets `change(current profile)` as the profile at once and returns it, with whether it
    /// replaced one. For submissions that arrive in an order (OSC requests): the next one builds
    /// on this one even before `profileChanged` (the presets and the recommendation) has run, so
    /// two quick submissions for the two ears both count. Any thread but the audio thread.
    public func updateProfile(_ change: (HearingProfile?) throws -> HearingProfile) rethrows
        -> (profile: HearingProfile, replacing: Bool) {
        try profileUpdates.withLock { _ in
            let current = presets.profile
            let profile = try change(current)
            presets.setProfile(profile)
            return (profile, current != nil)
        }
    }

    /// What follows a new profile (`submitProfile`, `updateProfile`): the variants the session's
    /// personalization mode offers, the recommendation (now, or when the next session starts)
    /// and, when a profile was replaced, the invalidation.
    public func profileChanged(replacing: Bool) async throws -> [PresetVariant] {
        let configuration = controller.session?.configuration ?? sessionConfiguration
        // The profile's variants that the personalization mode offers (single preset: default).
        let variants = presets.availableVariants(for: configuration.techLevel)
            .filter(configuration.personalization.variants.contains)
        if controller.session != nil {
            try await ControlError.refusing { try await controller.recommend(for: .hearingProfileSubmitted) }
        } else {
            await setRecommendationPending(true)
        }
        if replacing { await invalidate(.hearingProfileReplaced) }
        return variants
    }
}

/// A shared, lock-protected delivery timeout.
final class DeliveryTimeout: Sendable {
    private let storage: Mutex<Duration>
    init(_ value: Duration) { storage = Mutex(value) }
    var value: Duration {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// One `SoundFitRuntime.observeChanges` registration.
public struct ChangeObservation: Sendable {
    fileprivate let registration: Subscribers<ParameterChange<ParameterValue>>.Observation
    fileprivate init(_ registration: Subscribers<ParameterChange<ParameterValue>>.Observation) { self.registration = registration }
}

/// One `SoundFitRuntime.observeInvalidations` registration.
public struct InvalidationObservation: Sendable {
    fileprivate let registration: Subscribers<ParameterInvalidation>.Observation
    fileprivate init(_ registration: Subscribers<ParameterInvalidation>.Observation) { self.registration = registration }
}
