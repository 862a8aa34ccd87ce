import Synchronization
import SoundFitModel
import SoundFitProcessing

/// The processing session's parameters (the model entries bound to the session). Each resolves
/// the active session on every call: sessions come and go with the JACK server.
enum SessionControl {
    /// The control of every session parameter, in the model's order. Exhaustive: a new
    /// `SessionParameter.Name` does not compile until its control is made here.
    static func controls(controller: ProcessingController, presets: ProfilePresetSource) -> [any SessionControlParameter] {
        SessionParameter.Name.allCases.map { name -> any SessionControlParameter in
            let descriptor = ParameterModel.entry(for: name)
            return switch name {
            case .isEnabled:
                SessionValueControl<Bool>(
                    descriptor: descriptor, controller: controller, parameter: { $0.isEnabled },
                    toControl: { .bool($0) }, fromControl: { if case .bool(let v) = $0 { v } else { nil } },
                    refusal: enablingRefusal)
            case .intensity:
                SessionValueControl<Float>(
                    descriptor: descriptor, controller: controller, parameter: { $0.intensity },
                    toControl: { .float($0) }, fromControl: { if case .float(let v) = $0 { v } else { nil } })
            case .preset:
                SessionPresetControl(controller: controller, presets: presets)
            case .canEnable:
                SessionReadOnlyControl(
                    descriptor: descriptor, controller: controller,
                    // can_enable follows the preset: true while one is applied.
                    follow: { session, derived in session.preset.observeChanges { derived(.bool($0.value != nil)) } },
                    read: { .bool($0.canEnable) })
            case .techLevel:
                SessionReadOnlyControl(descriptor: descriptor, controller: controller) { .int($0.techLevel.value) }
            }
        }
    }

    static let noSession = ControlError("no processing session is active (not connected to a JACK server, or deactivated with /session/deactivate)")

    /// `can_enable` gates enabling: while no personalization preset is applied, something
    /// prevents processing, and `/processing/enabled 1` is refused with the reason. (Disabling is
    /// always allowed; while interrupted the session itself refuses enabling.)
    static func enablingRefusal(_ session: ProcessingSession, _ enable: Bool) -> ControlError? {
        guard enable, !session.isInterrupted, !session.canEnable else { return nil }
        return ControlError("personalization cannot be enabled: no personalization preset is applied (can_enable is 0); "
            + "submit a hearing profile (/profile/audiogram) and choose a preset (/processing/preset)")
    }
}

/// A session parameter as a surface sees it, and what it tells the change feed: the value of
/// each session that starts, then its changes. `SoundFitRuntime.run()` publishes every session
/// through its session controls, so a session parameter is listed once, where its control is made.
protocol SessionControlParameter: ControlParameter {
    /// Yields `session`'s value to `feed`, then observes its changes: each reaches the feed on
    /// the thread that made it, before its request is reported applied.
    func publish(_ session: ProcessingSession, to feed: ChangeFeed)
}

/// `/processing/enabled` and `/processing/intensity`.
struct SessionValueControl<Value: Sendable & Equatable>: SessionControlParameter {
    let descriptor: ParameterDescriptor
    let controller: ProcessingController
    let parameter: @Sendable (ProcessingSession) -> ProcessingParameter<Value>
    let toControl: @Sendable (Value) -> ParameterValue
    let fromControl: @Sendable (ParameterValue) -> Value?
    /// Why `value` cannot be requested in `session` now, if it cannot (checked after validation).
    var refusal: @Sendable (ProcessingSession, Value) -> ControlError? = { _, _ in nil }

    func currentValue() throws -> ParameterValue {
        guard let session = controller.session else { throw SessionControl.noSession }
        return toControl(parameter(session).value)
    }

    func publish(_ session: ProcessingSession, to feed: ChangeFeed) {
        let parameter = parameter(session), toControl = toControl
        feed.yield(ParameterChange(address: descriptor.address, value: toControl(parameter.value)))
        parameter.observeChanges { feed.yield($0.map(toControl)) }
    }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> {
        guard let session = controller.session else { throw SessionControl.noSession }
        return parameter(session).updateState.map(toControl)
    }

    func check(_ value: ParameterValue) throws {
        _ = try accepted(value)
    }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        let (session, native) = try accepted(value)
        return try ControlError.refusing { try parameter(session).request(native, origin: origin, reportedAs: toControl) }
    }

    /// The session and the native value a request for `value` would go to, or why it is refused now.
    private func accepted(_ value: ParameterValue) throws -> (ProcessingSession, Value) {
        try descriptor.validate(value)
        guard let session = controller.session else { throw SessionControl.noSession }
        guard let native = fromControl(value) else {
            throw ParameterError.wrongType(address: descriptor.address, expected: descriptor.kind.typeName)
        }
        if let refusal = refusal(session, native) { throw refusal }
        try ControlError.refusing { try parameter(session).check(native) }
        return (session, native)
    }
}

/// `/processing/preset`: a variant name is fetched from the preset source (reported `pending`
/// meanwhile), then requested like any value; `none` removes the preset.
struct SessionPresetControl: SessionControlParameter {
    let descriptor = ParameterModel.processingPreset
    let controller: ProcessingController
    let presets: ProfilePresetSource

    static func controlValue(_ preset: PersonalizationPreset?) -> ParameterValue {
        .choice(preset?.variant.rawValue ?? PresetVariant.noneName)
    }

    func currentValue() throws -> ParameterValue {
        guard let session = controller.session else { throw SessionControl.noSession }
        return Self.controlValue(session.preset.value)
    }

    func publish(_ session: ProcessingSession, to feed: ChangeFeed) {
        feed.yield(ParameterChange(address: descriptor.address, value: Self.controlValue(session.preset.value)))
        session.preset.observeChanges { feed.yield($0.map(Self.controlValue)) }
    }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> {
        guard let session = controller.session else { throw SessionControl.noSession }
        return session.preset.updateState.map(Self.controlValue)
    }

    func check(_ value: ParameterValue) throws {
        let (session, variant) = try accepted(value)
        if variant == nil { try ControlError.refusing { try session.preset.check(nil) } }
    }

    /// The session and the variant (nil: `none`) a request for `value` would go to, or why it is
    /// refused now.
    private func accepted(_ value: ParameterValue) throws -> (ProcessingSession, PresetVariant?) {
        try descriptor.validate(value)
        guard let session = controller.session else { throw SessionControl.noSession }
        guard case .choice(let name) = value else {
            throw ParameterError.wrongType(address: descriptor.address, expected: "string")
        }
        guard let variant = PresetVariant(rawValue: name) else { return (session, nil) }
        guard session.configuration.personalization.variants.contains(variant) else {
            throw ControlError(ProcessingError.presetVariantUnavailable(variant).description)
        }
        let available = presets.availableVariants(for: session.techLevel)
        guard available.contains(variant) else {
            throw ControlError(presets.profile == nil
                ? "no hearing profile yet: submit one with /profile/audiogram or --profile"
                : "preset variant \(variant) is not available for this hearing profile (available: \(available.map(\.rawValue).joined(separator: " ")))")
        }
        return (session, variant)
    }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        let (session, chosen) = try accepted(value)
        let address = descriptor.address
        guard let variant = chosen else {
            return try ControlError.refusing { try session.preset.request(nil, origin: origin, reportedAs: Self.controlValue) }
        }
        // Fetching the preset is asynchronous work of its own: this task does it, then requests
        // the preset and passes its states on.
        let states = AsyncStream<ParameterUpdateState<ParameterValue>> { continuation in
            let task = Task {
                continuation.yield(.pending(value))
                do {
                    let preset = try await session.fetchPreset(variant)
                    let request = try session.preset.request(preset, origin: origin, reportedAs: Self.controlValue)
                    for await state in request.states where state.name != .pending {
                        continuation.yield(state)
                    }
                } catch {
                    continuation.yield(.failed(value, error))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return ParameterRequest(id: 0, address: address, value: value, states: states)
    }
}

/// `/processing/can_enable` and `/processing/fitting`.
struct SessionReadOnlyControl: SessionControlParameter {
    /// Calls its second argument with the value derived from each change of what the value
    /// follows in a session (`can_enable` follows the preset). Inside a parameter's observer,
    /// so it must not read that parameter again: it derives the value from the change.
    typealias Follow = @Sendable (ProcessingSession, @escaping @Sendable (ParameterValue) -> Void) -> Void

    let descriptor: ParameterDescriptor
    let controller: ProcessingController
    /// What it follows; nil for a value a session keeps (the tech level).
    var follow: Follow?
    let read: @Sendable (ProcessingSession) -> ParameterValue

    func currentValue() throws -> ParameterValue {
        guard let session = controller.session else { throw SessionControl.noSession }
        return read(session)
    }

    /// Publishes the value, then each value `follow` derives that differs from the last published.
    func publish(_ session: ProcessingSession, to feed: ChangeFeed) {
        let address = descriptor.address, initial = read(session)
        feed.yield(ParameterChange(address: address, value: initial))
        let last = LastPublished(initial)
        follow?(session) { value in
            if last.changes(to: value) { feed.yield(ParameterChange(address: address, value: value)) }
        }
    }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> { .applied(try currentValue()) }

    func check(_ value: ParameterValue) throws {
        throw ParameterError.readOnly(address: descriptor.address)
    }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        throw ParameterError.readOnly(address: descriptor.address)
    }
}

/// The value a read-only session control published last: it tells the feed only its changes.
private final class LastPublished: Sendable {
    private let value: Mutex<ParameterValue>

    init(_ value: ParameterValue) { self.value = Mutex(value) }

    /// Records `value`; true when it differs from what was recorded before.
    func changes(to value: ParameterValue) -> Bool {
        self.value.withLock { last in
            defer { last = value }
            return last != value
        }
    }
}
