import Synchronization
import SoundFitEngine
import SoundFitProcessing

/// The audio engine as the processing session's handler (seed 000): writes isEnabled,
/// intensity and the preset to the audio thread and answers reads from what the engine holds.
///
/// A write completes only when the audio thread acknowledged the cycle in which the value took
/// effect; without a running JACK server it fails after the delivery timeout.
/// Thread rules: called by the processing controller from its tasks.
final class EngineProcessingHandler: ProcessingHandler {
    private let engine: AudioEngine
    private let presets: ProfilePresetSource
    private let timeout: @Sendable () -> Duration
    private let state = Mutex(State())

    private struct State {
        var invalidation: ProcessingInvalidation?
        var fitting: Fitting?
        var preset: PersonalizationPreset?
    }

    init(engine: AudioEngine, presets: ProfilePresetSource, timeout: @escaping @Sendable () -> Duration) {
        self.engine = engine
        self.presets = presets
        self.timeout = timeout
    }

    func set(_ parameter: SessionParameter.Writable) async throws {
        switch parameter {
        case .isEnabled(let enabled):
            try await engine.apply([(.personalizationEnabled, .bool(enabled))], timeout: timeout())
        case .intensity(let intensity):
            try await engine.apply([(.personalizationIntensity, .float(intensity))], timeout: timeout())
        case .preset(let preset):
            // The payload reaches the multiband processor with the hearing-profile issue; until
            // then the handler keeps the preset so canEnable answers truthfully.
            state.withLock { $0.preset = preset }
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
        case .fitting:
            guard let fitting = state.withLock({ $0.fitting }) else { throw ProcessingError.noActiveSession }
            return .fitting(fitting)
        }
    }

    func sessionDidActivate(_ session: ProcessingSession, invalidation: ProcessingInvalidation) async {
        state.withLock {
            $0.invalidation = invalidation
            $0.fitting = session.fitting
        }
    }

    func sessionDidDeactivate(_ session: ProcessingSession) async {
        state.withLock { $0.invalidation = nil }
    }

    /// Tells the controller that the processor's state is unknown (e.g. the engine restarted
    /// without the session noticing); it re-reads and re-applies.
    func invalidateAll(cause: any Error) async {
        let invalidation = state.withLock { $0.invalidation }
        await invalidation?.invalidateAll(cause: cause)
    }
}
