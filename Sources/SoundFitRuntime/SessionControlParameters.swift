import Synchronization
import SoundFitModel
import SoundFitProcessing

/// The processing session's parameters (the model entries bound to the session). Each resolves
/// the active session on every call: sessions come and go with the JACK server.
enum SessionControl {
    /// The control of every session parameter, in the model's order. A bool or a number follows
    /// from its entry (`valueControl`, `readingControl`); the exceptions are named here: the
    /// preset (fetched by variant name), the enable (refused without a preset) and `can_enable`
    /// (it follows the preset).
    static func controls(controller: ProcessingController, presets: ProfilePresetSource) -> [any SessionControlParameter] {
        SessionParameter.Name.allCases.map { name -> any SessionControlParameter in
            switch name {
            case .preset:
                SessionPresetControl(controller: controller, presets: presets)
            case .isEnabled:
                valueControl(name, controller: controller, refusal: enablingRefusal)
            case .canEnable:
                SessionReadOnlyControl(
                    descriptor: ParameterModel.entry(for: name), controller: controller,
                    // can_enable follows the preset: true while one is applied.
                    follow: { session, derived in session.preset.observeChanges { derived(.bool($0.value != nil)) } },
                    read: { .bool($0.canEnable) })
            default:
                name.isWritable ? valueControl(name, controller: controller) : readingControl(name, controller: controller)
            }
        }
    }

    /// A writable bool or number: the session's parameter of that type, requested like any value.
    private static func valueControl(_ name: SessionParameter.Name, controller: ProcessingController,
                                     refusal: @escaping @Sendable (ProcessingSession, Bool) -> ControlError? = { _, _ in nil })
        -> any SessionControlParameter {
        let descriptor = ParameterModel.entry(for: name)
        switch descriptor.kind {
        case .bool:
            return SessionValueControl<Bool>(descriptor: descriptor, controller: controller, name: name, refusal: refusal)
        case .float:
            return SessionValueControl<Float>(descriptor: descriptor, controller: controller, name: name)
        case .int, .choice:
            preconditionFailure("\(descriptor.address): a session parameter of kind \(descriptor.kind.typeName) needs its control named in SessionControl.controls")
        }
    }

    /// A read-only one the session holds: its reading as the entry states it.
    private static func readingControl(_ name: SessionParameter.Name, controller: ProcessingController) -> any SessionControlParameter {
        guard let readable = SessionParameter.Readable(name) else {
            preconditionFailure("\(name): a read-only session parameter needs a reading (SessionParameter.Readable)")
        }
        return SessionReadOnlyControl(descriptor: ParameterModel.entry(for: name), controller: controller) {
            $0.expectedReading(readable).parameterValue
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

/// A value a surface sends and shows as itself: a session parameter's bool or number.
protocol SessionSurfaceValue: Sendable, Equatable {
    /// The value `value` stands for, if it is of this type.
    init?(surfaceValue value: ParameterValue)
    var surfaceValue: ParameterValue { get }
}

extension Bool: SessionSurfaceValue {
    init?(surfaceValue value: ParameterValue) {
        guard case .bool(let bool) = value else { return nil }
        self = bool
    }

    var surfaceValue: ParameterValue { .bool(self) }
}

extension Float: SessionSurfaceValue {
    init?(surfaceValue value: ParameterValue) {
        guard case .float(let float) = value else { return nil }
        self = float
    }

    var surfaceValue: ParameterValue { .float(self) }
}

/// A writable session parameter of a bool or a number (`/processing/enabled`,
/// `/processing/intensity`): the session's `ProcessingParameter<Value>` of that name.
struct SessionValueControl<Value: SessionSurfaceValue>: SessionControlParameter {
    let descriptor: ParameterDescriptor
    let controller: ProcessingController
    let name: SessionParameter.Name
    /// Why `value` cannot be requested in `session` now, if it cannot (checked after validation).
    var refusal: @Sendable (ProcessingSession, Value) -> ControlError? = { _, _ in nil }

    private func parameter(_ session: ProcessingSession) -> ProcessingParameter<Value> {
        guard let parameter = session.parameter(name, as: Value.self) else {
            preconditionFailure("\(descriptor.address): the session holds no \(Value.self) parameter \(name)")
        }
        return parameter
    }

    func currentValue() throws -> ParameterValue {
        guard let session = controller.session else { throw SessionControl.noSession }
        return parameter(session).value.surfaceValue
    }

    func publish(_ session: ProcessingSession, to feed: ChangeFeed) {
        let parameter = parameter(session)
        feed.yield(ParameterChange(address: descriptor.address, value: parameter.value.surfaceValue))
        parameter.observeChanges { feed.yield($0.map(\.surfaceValue)) }
    }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> {
        guard let session = controller.session else { throw SessionControl.noSession }
        return parameter(session).updateState.map(\.surfaceValue)
    }

    func check(_ value: ParameterValue) throws {
        _ = try accepted(value)
    }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        let (session, native) = try accepted(value)
        return try ControlError.refusing { try parameter(session).request(native, origin: origin, reportedAs: \.surfaceValue) }
    }

    /// The session and the native value a request for `value` would go to, or why it is refused now.
    private func accepted(_ value: ParameterValue) throws -> (ProcessingSession, Value) {
        try descriptor.validate(value)
        guard let session = controller.session else { throw SessionControl.noSession }
        guard let native = Value(surfaceValue: value) else {
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
