import Synchronization
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitProcessing

/// The audio engine as the processing session's handler: writes isEnabled,
/// intensity and the preset to the audio thread and answers reads from what the engine holds.
///
/// A write completes only when the audio thread acknowledged the cycle in which the value took
/// effect; without a cycle it fails after its apply timeout (`applyTimeouts`), or the delivery
/// timeout when that is shorter. It is an ordinary
/// (not streaming) applicator: session parameters keep one delivery in flight, which is plenty
/// for values that change at human pace and keeps the preset hand-over simple. Should a newer
/// value reach the engine first anyway, the write throws `ProcessingParameterError.superseded`.
/// Thread rules: called by the processing controller from its tasks.
final class EngineProcessingHandler: ProcessingHandler {
    private let engine: AudioEngine
    private let timeout: @Sendable () -> Duration
    private let state = Mutex(State())

    private struct State {
        var invalidation: ProcessingInvalidation?
        var techLevel: TechLevel?
        var preset: PersonalizationPreset?
        /// Told each ear's derived maximum output (dB SPL; nil: no preset) before a preset is installed.
        var maximaObserver: (@Sendable (EarMaxima?) -> Void)?
    }

    /// Calls `observer` with each ear's derived maximum output (`MaximumOutput`) before every
    /// preset change reaches the engine, so the output limit follows the preset.
    func observeEarMaxima(_ observer: @escaping @Sendable (EarMaxima?) -> Void) {
        state.withLock { $0.maximaObserver = observer }
    }

    init(engine: AudioEngine, timeout: @escaping @Sendable () -> Duration) {
        self.engine = engine
        self.timeout = timeout
    }

    /// Named by the error of a write that exceeded its apply timeout.
    var applicatorName: String { "the audio engine" }

    /// A write waits for one audio cycle: even an 8192-frame period at 22.05 kHz is 0.37 s, so
    /// 3 s means the server stalled, whatever the delivery timeout. A preset is prepared first
    /// (its filters designed off the audio thread): 6 s.
    static let applyTimeouts: [SessionParameter.Name: Duration] = [
        .isEnabled: .seconds(3), .intensity: .seconds(3), .preset: .seconds(6),
    ]

    func applyTimeout(for parameter: SessionParameter.Name) -> Duration? { Self.applyTimeouts[parameter] }

    func set(_ parameter: SessionParameter.Writable) async throws {
        switch parameter {
        case .isEnabled(let enabled):
            try await applyToEngine([(.personalizationEnabled, .bool(enabled))])
        case .intensity(let intensity):
            try await applyToEngine([(.personalizationIntensity, .float(intensity))])
        case .preset(let preset):
            var payload: PresetPayload?
            if let preset {
                guard let carried = preset.payload else { throw ControlError("preset '\(preset.id)' carries no payload") }
                try carried.validate(for: preset.techLevel)
                payload = carried
            }
            state.withLock { $0.maximaObserver }?(payload.map(EarMaxima.init))
            try await engine.installPersonalization(payload, timeout: timeout())
            state.withLock { $0.preset = preset }
        }
    }

    /// Publishes `changes` and waits for the audio thread; a newer value that reached it first
    /// makes this one superseded (in the processing model's words).
    private func applyToEngine(_ changes: [(EngineSlot, ParameterValue)]) async throws {
        do {
            // The session validated the value when it accepted the request.
            try await engine.waitUntilApplied(engine.submit(validated: changes), timeout: timeout())
        } catch EngineError.superseded {
            throw ProcessingParameterError.superseded
        }
    }

    func get(_ parameter: SessionParameter.Readable) async throws -> SessionParameter.ReadValue {
        switch parameter {
        case .isEnabled:
            guard case .bool(let enabled) = engine.value(of: .personalizationEnabled) else { return .isEnabled(false) }
            return .isEnabled(enabled)
        case .intensity:
            guard case .float(let intensity) = engine.value(of: .personalizationIntensity) else { return .intensity(0) }
            return .intensity(intensity)
        case .canEnable:
            return .canEnable(state.withLock { $0.preset != nil })
        case .techLevel:
            guard let techLevel = state.withLock({ $0.techLevel }) else { throw ProcessingError.noActiveSession }
            return .techLevel(techLevel)
        }
    }

    func sessionDidActivate(_ session: ProcessingSession, invalidation: ProcessingInvalidation) async {
        // The personalization stage follows the session's tech level (its preset is re-applied
        // by the session right after this).
        if engine.personalizationTechLevel != session.techLevel.value {
            engine.personalizationTechLevel = session.techLevel.value
            state.withLock { $0.preset = nil }
        }
        state.withLock {
            $0.invalidation = invalidation
            $0.techLevel = session.techLevel
        }
    }

    func sessionDidDeactivate(_ session: ProcessingSession) async {
        state.withLock { $0.invalidation = nil }
    }

    /// Tells the controller that the processor's state is unknown (e.g. the engine restarted
    /// without the session noticing); it re-reads and re-applies.
    func invalidate(cause: any Error) async {
        let invalidation = state.withLock { $0.invalidation }
        await invalidation?.invalidate(cause: cause)
    }
}
