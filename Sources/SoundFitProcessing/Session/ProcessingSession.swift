import SoundFitModel
import Synchronization

/// The activated processing context: it exists while SoundFit is connected to a JACK server
/// (the way a headphone's processing session follows its connection) and holds the processing
/// parameters.
///
/// Get one from `ProcessingController.activate(configuration:)`; it stays active until
/// `ProcessingController.deactivate()`, after which its parameters reject changes with
/// `ProcessingError.sessionInactive` (the controller keeps their values for the next session).
///
/// When the controller has a `ProcessingHandler`, each writable parameter has the handler as an
/// applicator, with the handler's apply timeout for that parameter.
///
/// Thread rules: every member may be called from any thread or task (not the audio thread).
public final class ProcessingSession: Sendable, Identifiable, CustomStringConvertible {
    /// The activation number, 1 for the controller's first session.
    public let id: UInt64
    /// What the session was activated with.
    public let configuration: ProcessingConfiguration
    /// Whether processing is enabled. Enabling is rejected with `ProcessingError.interrupted`
    /// while the session is interrupted.
    public let isEnabled: ProcessingParameter<Bool>
    /// How much processing is applied, 0…1; other values are rejected with
    /// `ProcessingError.invalidIntensity`.
    public let intensity: ProcessingParameter<Float>
    /// The personalization preset, or nil. Remote: `preset.load()` fetches the current preset's
    /// variant (or `default`) again from the `PresetSource` and applies it. Presets for another
    /// tech level, or of a variant the mode does not offer, are rejected.
    public let preset: ProcessingParameter<PersonalizationPreset?>

    /// The writable parameters (`isEnabled`, `intensity`, `preset`) in the model's order, for
    /// what every one of them takes alike: the delivery configuration, persistence, closing,
    /// and the handler's applicator (held here, so it lives as long as the session).
    let writables: [WritableParameter]
    private let interruptions: Interruptions
    private let presetSource: (any PresetSource)?
    private let startedWithIntensity: Bool
    /// The variant to regenerate for this session's tech level: the previous session's preset
    /// could not carry over (made for another tech level, or a variant this mode does not
    /// offer). nil when it carried over or there was none.
    let presetToRegenerate: PresetVariant?
    private let active = Atomic<Bool>(true)

    init(id: UInt64, configuration: ProcessingConfiguration, held: HeldValues, config: DeliveryConfiguration,
         clock: any Clock<Duration>, handler: (any ProcessingHandler)?, presetSource: (any PresetSource)?,
         interruptions: Interruptions) {
        self.id = id
        self.configuration = configuration
        self.interruptions = interruptions
        self.presetSource = presetSource
        self.startedWithIntensity = held.intensity != nil
        let personalization = configuration.personalization
        let isInterrupted = interruptions.isInterrupted.load(ordering: .sequentiallyConsistent)
        let isEnabled = ProcessingParameter(
            held.isEnabled && !isInterrupted, address: ParameterModel.entry(for: .isEnabled).address, config: config, clock: clock,
            validate: { [interruptions] value in
                if value, interruptions.isInterrupted.load(ordering: .sequentiallyConsistent) {
                    throw ProcessingError.interrupted
                }
            })
        let intensity = ProcessingParameter(
            held.intensity ?? 0, address: ParameterModel.entry(for: .intensity).address, config: config, clock: clock,
            validate: { value in
                guard (0...1).contains(value) else { throw ProcessingError.invalidIntensity(value) }
            })
        let heldPreset = held.preset.flatMap { (try? Self.validate($0, for: personalization)) == nil ? nil : $0 }
        presetToRegenerate = held.preset.flatMap { dropped in
            guard heldPreset == nil else { return nil }
            return personalization.variants.contains(dropped.variant) ? dropped.variant : .default
        }
        let preset = ProcessingParameter(
            heldPreset, address: ParameterModel.entry(for: .preset).address, config: config, clock: clock,
            validate: { value in try Self.validate(value, for: personalization) },
            load: { current in
                try await Self.fetch(current?.variant ?? .default, for: personalization, from: presetSource)
            })
        writables = [
            WritableParameter(.isEnabled, isEnabled, handler: handler) { .isEnabled($0) },
            WritableParameter(.intensity, intensity, handler: handler) { .intensity($0) },
            WritableParameter(.preset, preset, handler: handler) { .preset($0) },
        ]
        self.isEnabled = isEnabled
        self.intensity = intensity
        self.preset = preset
    }

    /// The processor's tech level (from the configuration). Read-only.
    public var techLevel: TechLevel { configuration.techLevel }

    /// Whether enabling processing makes sense: true when a preset is applied. Read-only;
    /// observe `preset.valueUpdates()` for changes.
    public var canEnable: Bool { preset.value != nil }

    /// False once the controller deactivated the session.
    public var isActive: Bool { active.load(ordering: .sequentiallyConsistent) }

    /// Whether at least one interruption is active.
    public var isInterrupted: Bool { interruptions.isInterrupted.load(ordering: .sequentiallyConsistent) }

    /// The active interruption reasons.
    public var interruptionReasons: Set<String> { interruptions.state.withLock { $0.reasons } }

    /// `session 1 (fine_tuning, tech level 3)`.
    public var description: String { "session \(id) (\(configuration))" }

    // MARK: Interruptions

    /// Interrupts processing for `reason` (e.g. a hearing test running, a calibration): the
    /// first interruption forces `isEnabled` to false through the applicators and remembers the
    /// value it was meant to have; while interrupted, enabling is rejected. Several reasons can
    /// be active at once; interrupting again with an active reason changes nothing.
    ///
    /// Interruptions belong to the controller: a session re-activated while interrupted starts
    /// interrupted. Returns whether the session is interrupted (true). Throws
    /// `ProcessingError.sessionInactive` on a deactivated session, or the error that kept
    /// `isEnabled` from being applied (the interruption stays active then).
    public func interrupt(reason: String) async throws -> Bool {
        guard isActive else { throw ProcessingError.sessionInactive }
        guard reason.utf8.count <= InterruptionState.maximumReasonBytes else {
            throw ProcessingError.interruptionReasonTooLong(bytes: reason.utf8.count)
        }
        let request = try interruptions.state.withLock { state -> ParameterRequest<Bool>? in
            guard state.reasons.contains(reason) || state.reasons.count < InterruptionState.maximumReasons else {
                throw ProcessingError.tooManyInterruptions
            }
            guard state.interrupt(reason: reason) == .disable else { return nil }
            interruptions.isInterrupted.store(true, ordering: .sequentiallyConsistent)
            do {
                let (request, latest) = try isEnabled.requestCapturingLatest(false)
                state.valueBeforeInterruption = latest
                return request
            } catch {
                _ = state.resolve(reason: reason)
                interruptions.isInterrupted.store(false, ordering: .sequentiallyConsistent)
                throw error
            }
        }
        if let request { try await Self.settle(request) }
        return isInterrupted
    }

    /// Resolves the interruption `reason` (an inactive reason changes nothing). When no reason
    /// remains, `isEnabled` returns to its value from before the first interruption (changes to
    /// false made while interrupted are not kept). Returns whether the session is still
    /// interrupted. Throws `ProcessingError.sessionInactive` on a deactivated session, or the
    /// error that kept `isEnabled` from being restored (the interruption is resolved anyway).
    public func resolve(interruption reason: String) async throws -> Bool {
        guard isActive else { throw ProcessingError.sessionInactive }
        let request = try interruptions.state.withLock { state -> ParameterRequest<Bool>? in
            guard case .restore(let value) = state.resolve(reason: reason) else { return nil }
            interruptions.isInterrupted.store(false, ordering: .sequentiallyConsistent)
            return try isEnabled.request(value)
        }
        if let request { try await Self.settle(request) }
        return isInterrupted
    }

    // MARK: Presets

    /// Fetches the preset of `variant` for this session's tech level from the `PresetSource`,
    /// without applying it (e.g. to `preset.request(_:)` it and report its states). Throws
    /// `ProcessingError.presetVariantUnavailable`, `.noPresetSource`, the source's error, or
    /// `.presetFittingMismatch` when the source returns a preset for another tech level.
    public func fetchPreset(_ variant: PresetVariant) async throws -> PersonalizationPreset {
        try await Self.fetch(variant, for: configuration.personalization, from: presetSource)
    }

    /// Fetches the preset of `variant` and applies it (see `fetchPreset(_:)` and
    /// `ProcessingParameter.apply(_:)`).
    public func loadPreset(_ variant: PresetVariant) async throws {
        try await preset.apply(try await fetchPreset(variant))
    }

    // MARK: Internal

    /// Whether an intensity was set: held from an earlier session, or applied in this one.
    var intensityIsSet: Bool { startedWithIntensity || intensity.appliedRequestCount > 0 }

    /// What the session holds for a parameter the handler can be read for: the reading a
    /// handler that is up to date answers.
    public func expectedReading(_ readable: SessionParameter.Readable) -> SessionParameter.ReadValue {
        switch readable {
        case .isEnabled: .isEnabled(isEnabled.value)
        case .canEnable: .canEnable(canEnable)
        case .intensity: .intensity(intensity.value)
        case .techLevel: .techLevel(techLevel)
        }
    }

    /// The writable parameter `name` (nil for a read-only one).
    func writable(_ name: SessionParameter.Name) -> WritableParameter? { writables.first { $0.name == name } }

    /// The writable parameter `name` if it holds `Value`s (nil otherwise): how a surface that
    /// knows the parameter's entry, not the session's properties, reaches it.
    public func parameter<Value>(_ name: SessionParameter.Name, as type: Value.Type) -> ProcessingParameter<Value>? {
        writable(name)?.parameter as? ProcessingParameter<Value>
    }

    /// What the controller keeps when this session ends.
    var heldValues: HeldValues {
        HeldValues(isEnabled: isEnabled.value, intensity: intensityIsSet ? intensity.value : nil, preset: preset.value)
    }

    /// Applies a recommendation: preset, then intensity, then isEnabled (which, while
    /// interrupted, only changes the value restored by the last resolve). A value superseded by
    /// a newer request counts as done: the newer value wins.
    func follow(_ recommendation: Recommendation) async throws {
        if let variant = recommendation.presetVariant {
            try await Self.settle(preset.request(try await fetchPreset(variant)))
        }
        if let value = recommendation.intensity {
            try await Self.settle(intensity.request(value))
        }
        if let value = recommendation.isEnabled {
            let request = try interruptions.state.withLock { state -> ParameterRequest<Bool>? in
                guard !state.isInterrupted else {
                    state.valueBeforeInterruption = value
                    return nil
                }
                return try isEnabled.request(value)
            }
            if let request { try await Self.settle(request) }
        }
    }

    func updateConfig(_ config: DeliveryConfiguration) {
        for writable in writables { writable.setConfig(config) }
    }

    /// See `ProcessingController.persistAppliedValues(with:)`.
    func persistAppliedValues(with persist: @escaping @Sendable () async -> Void) {
        for writable in writables { writable.persistAppliedValues(persist) }
    }

    /// Ends the session: its parameters reject changes, waiting values fail, deliveries in
    /// flight are cancelled (all with `ProcessingError.sessionInactive`).
    func close() {
        active.store(false, ordering: .sequentiallyConsistent)
        for writable in writables { writable.close(ProcessingError.sessionInactive) }
    }

    /// Waits for a request's end; throws only when it failed (superseded is fine: a newer
    /// value took its place).
    private static func settle<Value>(_ request: ParameterRequest<Value>) async throws {
        if case .failed(_, let error) = await request.terminalState() { throw error }
    }

    private static func validate(_ preset: PersonalizationPreset?,
                                 for personalization: ProcessingConfiguration.Personalization) throws(ProcessingError) {
        guard let preset else { return }
        guard preset.techLevel == personalization.techLevel else {
            throw .presetTechLevelMismatch(presetTechLevel: preset.techLevel.value,
                                         sessionTechLevel: personalization.techLevel.value)
        }
        guard personalization.variants.contains(preset.variant) else {
            throw .presetVariantUnavailable(preset.variant)
        }
    }

    private static func fetch(_ variant: PresetVariant, for personalization: ProcessingConfiguration.Personalization,
                              from source: (any PresetSource)?) async throws -> PersonalizationPreset {
        guard personalization.variants.contains(variant) else { throw ProcessingError.presetVariantUnavailable(variant) }
        guard let source else { throw ProcessingError.noPresetSource }
        let preset = try await source.preset(variant, for: personalization.techLevel)
        try validate(preset, for: personalization)
        return preset
    }
}

/// A writable session parameter, whatever its value type, with the applicator through which
/// the `ProcessingHandler` receives its values.
struct WritableParameter: Sendable {
    let name: SessionParameter.Name
    /// The `ProcessingParameter<Value>` itself, for `ProcessingSession.parameter(_:as:)`.
    let parameter: any Sendable
    let setConfig: @Sendable (DeliveryConfiguration) -> Void
    let persistAppliedValues: @Sendable (@escaping @Sendable () async -> Void) -> Void
    let close: @Sendable (any Error) -> Void
    /// Its applicators, as a surface lists them.
    let applicators: @Sendable () -> [SessionApplicator]
    /// Whether the handler's applicator applied the current value (false without a handler).
    let isHandlerUpToDate: @Sendable () -> Bool
    /// Marks the handler's applicator out of date and applies the current value to it again
    /// (nothing without a handler).
    let reapplyToHandler: @Sendable () async throws -> Void

    /// `parameter`, named `name`, with the handler as its applicator (named, with the
    /// handler's apply timeout for it): `write` makes the value the handler is given.
    init<Value>(_ name: SessionParameter.Name, _ parameter: ProcessingParameter<Value>, handler: (any ProcessingHandler)?,
                write: @escaping @Sendable (Value) -> SessionParameter.Writable) {
        // Captured by the closures below: the parameter holds its applicators weakly.
        let applicator = handler.map { handler in
            parameter.addApplicator(name: handler.applicatorName, applyTimeout: handler.applyTimeout(for: name)) {
                try await handler.set(write($0))
            }
        }
        self.name = name
        self.parameter = parameter
        setConfig = { parameter.config = $0 }
        persistAppliedValues = { parameter.persistAppliedValues(with: $0) }
        close = { parameter.close(throwing: $0) }
        applicators = {
            parameter.applicators.map { SessionApplicator(parameter: name, name: $0.name, applyTimeout: $0.applyTimeout) }
        }
        isHandlerUpToDate = { applicator.map(parameter.isUpToDate) ?? false }
        reapplyToHandler = {
            guard let applicator else { return }
            parameter.invalidate(applicator)
            try await parameter.synchronizeApplicators()
        }
    }
}

/// The values a controller keeps between sessions (the applied values of the last session).
struct HeldValues: Sendable, Equatable {
    var isEnabled = false
    /// nil until an intensity was set (then the activation recommendation applies).
    var intensity: Float?
    var preset: PersonalizationPreset?
}
