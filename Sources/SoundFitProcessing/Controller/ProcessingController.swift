import SoundFitModel
import Synchronization

/// The one owner of processing state: the session, the delivery configuration, the values kept
/// between sessions, the interruptions, and the handler.
///
/// ```swift
/// let controller = ProcessingController(handler: engineHandler, presetSource: profiles)
/// let session = try await controller.activate(configuration: .fineTuning(techLevel: try TechLevel(3)))
/// try await session.intensity.apply(0.8)
/// await controller.deactivate()
/// ```
///
/// Lifecycle: activate a session when the processing system is reachable (SoundFit: connected to
/// a JACK server, with the processor's tech level known) and deactivate it when it goes away.
/// Only one session is active at a time. When a session is deactivated the controller keeps its
/// applied values (isEnabled, intensity, preset) and the next session starts with them, and they
/// are re-applied to the handler on activation, so a reconnection loses nothing.
///
/// Thread rules: every member may be called from any thread or task (not the audio thread);
/// synchronous members never wait for applicators or the handler.
public final class ProcessingController: Sendable {
    private struct State {
        var session: ProcessingSession?
        var held = HeldValues()
        var config: DeliveryConfiguration
        var activations: UInt64 = 0
        /// See `persistAppliedValues(with:)`.
        var persistence: (@Sendable () async -> Void)?
    }

    private let state: Mutex<State>
    let handler: (any ProcessingHandler)?
    private let presetSource: (any PresetSource)?
    private let clock: any Clock<Duration>
    let processingClock: DeliveryClock
    private let interruptions = Interruptions()
    private let sessions = Subscribers<ProcessingSession?>()

    /// Creates a controller with no active session.
    ///
    /// - Parameters:
    ///   - handler: receives the session's values (as an applicator of each writable
    ///     parameter) and can invalidate them; nil when applicators are added by other means.
    ///   - presetSource: where the session's remote `preset` parameter loads presets from.
    ///   - config: the initial delivery configuration (continuous, 10 s timeout by default).
    ///   - clock: the clock for settle times and timeouts; a virtual clock in tests.
    public init(handler: (any ProcessingHandler)? = nil, presetSource: (any PresetSource)? = nil,
                config: DeliveryConfiguration = .default, clock: any Clock<Duration> = ContinuousClock()) {
        self.state = Mutex(State(config: config))
        self.handler = handler
        self.presetSource = presetSource
        self.clock = clock
        self.processingClock = DeliveryClock(clock)
    }

    // MARK: Session

    /// The active session, or nil.
    public var session: ProcessingSession? { state.withLock { $0.session } }

    /// A new stream of the session: the current one (or nil) first, then every change (a new
    /// session on activation, nil on deactivation). Buffers without bound: consume it.
    public func sessionUpdates() -> AsyncStream<ProcessingSession?> {
        state.withLock { state in sessions.subscribe(current: state.session) }
    }

    /// Activates a session with `configuration` and returns it.
    ///
    /// The session is published at once (`session`, `sessionUpdates()`), starting with the
    /// values the controller holds from the previous session (none the first time; a preset
    /// for another tech level or a variant the mode does not offer cannot carry over). Then, in
    /// this order: the handler is told (`sessionDidActivate`), the preset is applied to the
    /// handler, the activation recommendation is followed (a preset that could not carry over
    /// is regenerated from the `PresetSource` for the new tech level — its variant, or `default`
    /// when the mode does not offer it; intensity 0.5 if none was ever set), and intensity and
    /// isEnabled are applied to the handler. Failures of those deliveries do not fail the
    /// activation: they are reported on the parameters' update states, and the handler stays
    /// out of date for them until the next delivery or synchronization.
    ///
    /// Throws `ProcessingError.sessionAlreadyActive` while a session is active.
    @discardableResult
    public func activate(configuration: ProcessingConfiguration) async throws -> ProcessingSession {
        let session = try state.withLock { state -> ProcessingSession in
            guard state.session == nil else { throw ProcessingError.sessionAlreadyActive }
            state.activations += 1
            let session = ProcessingSession(
                id: state.activations, configuration: configuration, held: state.held, config: state.config,
                clock: clock, handler: handler, presetSource: presetSource, interruptions: interruptions)
            if let persistence = state.persistence { session.persistAppliedValues(with: persistence) }
            state.session = session
            sessions.yield(session)
            return session
        }
        if let handler {
            await handler.sessionDidActivate(session, invalidation: ProcessingInvalidation(controller: self, session: session))
        }
        try? await session.preset.synchronizeApplicators()
        if let variant = session.presetToRegenerate {
            // The previous preset was made for another tech level or mode: the same variant,
            // generated for this one (its own step, so a failure leaves the rest to follow).
            try? await session.follow(Recommendation(presetVariant: variant))
        }
        try? await session.follow(.recommendation(for: .sessionActivated, intensityIsSet: session.intensityIsSet))
        try? await session.intensity.synchronizeApplicators()
        try? await session.isEnabled.synchronizeApplicators()
        return session
    }

    /// Deactivates the active session (nothing happens without one).
    ///
    /// The session's parameters stop accepting changes; waiting values fail and deliveries in
    /// flight are cancelled, with `ProcessingError.sessionInactive`. The controller keeps the
    /// session's applied values for the next session, publishes nil, then tells the handler
    /// (`sessionDidDeactivate`). Interruptions stay active.
    public func deactivate() async {
        let session = state.withLock { state -> ProcessingSession? in
            guard let session = state.session else { return nil }
            session.close()
            state.held = session.heldValues
            state.session = nil
            sessions.yield(nil)
            return session
        }
        if let session, let handler {
            await handler.sessionDidDeactivate(session)
        }
    }

    // MARK: Configuration

    /// The delivery configuration: style (continuous or discrete with a settle time) and
    /// delivery timeout. Setting it applies at once to the active session's parameters and to
    /// later sessions. Validate values from users
    /// with `DeliveryConfiguration.validate()` first.
    public var config: DeliveryConfiguration {
        get { state.withLock { $0.config } }
        set {
            state.withLock { state in
                state.config = newValue
                state.session?.updateConfig(newValue)
            }
        }
    }

    /// Makes every request of the session's parameters (now and later) wait for `persist`
    /// before it is reported `applied` (see
    /// `ProcessingParameter.persistAppliedValues(with:)`): the durable state's journal.
    public func persistAppliedValues(with persist: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.persistence = persist
            state.session?.persistAppliedValues(with: persist)
        }
    }

    // MARK: Recommendations

    /// Moves the active session's parameters to the values recommended after `event` (see
    /// `Recommendation`), through the ordinary apply sequence. Throws
    /// `ProcessingError.noActiveSession` without a session, else the first failure (e.g. the
    /// preset source's error; the parameters after it are left unchanged).
    public func recommend(for event: RecommendationEvent) async throws {
        guard let session else { throw ProcessingError.noActiveSession }
        try await session.follow(.recommendation(for: event, intensityIsSet: session.intensityIsSet))
    }

    // MARK: Invalidation

    /// Recovers the active session after its handler's state for `parameters` became unknown,
    /// and returns what was done (nil without a session or handler). Handlers normally call
    /// this through their `ProcessingInvalidation`.
    ///
    /// Recovery: each invalidated readable parameter is read from the handler (`isEnabled`,
    /// `intensity`, `canEnable`, `techLevel`). A writable parameter is re-applied when the
    /// handler's value differs from the session's, when the read failed, or, for `preset`
    /// (which cannot be read), when it was invalidated or the handler's `canEnable` disagrees
    /// with the session's. Re-applying marks the handler's applicator out of date and
    /// synchronizes, in the order preset, intensity, isEnabled. A different tech level is
    /// reported, not fixed. `parameters` defaults to all of them (the whole state is unknown).
    @discardableResult
    public func invalidate(parameters: Set<SessionParameter.Name> = Set(SessionParameter.Name.allCases),
                           cause: (any Error)? = nil) async -> InvalidationReport? {
        guard let session else { return nil }
        return await recover(session, invalidating: parameters, cause: cause)
    }
}
