import SoundFitModel
import SoundFitTestSupport
import Synchronization
@testable import SoundFitProcessing

enum FakeHandlerError: Error, Equatable {
    case offline
    case rejected
}

/// A processing handler that keeps its processor's state in memory, logs every write, and can
/// go away (lose its state, fail every call) and come back.
final class FakeHandler: ProcessingHandler {
    struct Processor: Equatable {
        var isEnabled = false
        var intensity: Float = 0
        var preset: PersonalizationPreset?
        var techLevel: TechLevel
    }

    private struct State {
        var processor: Processor
        var isOnline = true
        var writes: [String] = []
        var invalidation: ProcessingInvalidation?
        var activations: [UInt64] = []
        var deactivations: [UInt64] = []
        /// The next write waits at this gate (once).
        var gate: Gate?
        var gateReached: Gate?
        var failingWrites: Set<SessionParameter.Name> = []
    }

    private let state: Mutex<State>
    let applicatorName: String
    private let applyTimeouts: [SessionParameter.Name: Duration]

    init(techLevel: TechLevel, name: String = "the fake processor", applyTimeouts: [SessionParameter.Name: Duration] = [:]) {
        state = Mutex(State(processor: Processor(techLevel: techLevel)))
        applicatorName = name
        self.applyTimeouts = applyTimeouts
    }

    func applyTimeout(for parameter: SessionParameter.Name) -> Duration? { applyTimeouts[parameter] }

    func set(_ parameter: SessionParameter.Writable) async throws {
        let (gate, reached) = state.withLock { state in
            defer { state.gate = nil; state.gateReached = nil }
            return (state.gate, state.gateReached)
        }
        if let gate {
            reached?.open()
            await gate.wait()
        }
        try state.withLock { state in
            guard state.isOnline else { throw FakeHandlerError.offline }
            guard !state.failingWrites.contains(parameter.name) else { throw FakeHandlerError.rejected }
            state.writes.append(parameter.description)
            switch parameter {
            case .isEnabled(let value): state.processor.isEnabled = value
            case .intensity(let value): state.processor.intensity = value
            case .preset(let value): state.processor.preset = value
            }
        }
    }

    func get(_ parameter: SessionParameter.Readable) async throws -> SessionParameter.ReadValue {
        try state.withLock { state in
            guard state.isOnline else { throw FakeHandlerError.offline }
            switch parameter {
            case .isEnabled: return .isEnabled(state.processor.isEnabled)
            case .canEnable: return .canEnable(state.processor.preset != nil)
            case .intensity: return .intensity(state.processor.intensity)
            case .techLevel: return .techLevel(state.processor.techLevel)
            }
        }
    }

    func sessionDidActivate(_ session: ProcessingSession, invalidation: ProcessingInvalidation) async {
        state.withLock { state in
            state.invalidation = invalidation
            state.activations.append(session.id)
        }
    }

    func sessionDidDeactivate(_ session: ProcessingSession) async {
        state.withLock { $0.deactivations.append(session.id) }
    }

    var processor: Processor { state.withLock { $0.processor } }
    var writes: [String] { state.withLock { $0.writes } }
    var activations: [UInt64] { state.withLock { $0.activations } }
    var deactivations: [UInt64] { state.withLock { $0.deactivations } }
    var invalidation: ProcessingInvalidation? { state.withLock { $0.invalidation } }

    func clearWrites() { state.withLock { $0.writes = [] } }

    /// The next write waits at `gate`; `reached` opens when it got there.
    func holdNextWrite(at gate: Gate, reached: Gate) {
        state.withLock { state in
            state.gate = gate
            state.gateReached = reached
        }
    }

    func failWrites(of names: Set<SessionParameter.Name>) { state.withLock { $0.failingWrites = names } }

    /// The processor restarts: its state is lost and every call fails until `comeBack()`.
    func goAway() {
        state.withLock { state in
            state.isOnline = false
            state.processor = Processor(techLevel: state.processor.techLevel)
        }
    }

    /// The processor is back (with its fresh state) and tells the controller.
    func comeBack() async -> InvalidationReport? {
        let invalidation = state.withLock { state in
            state.isOnline = true
            return state.invalidation
        }
        return await invalidation?.invalidate(cause: nil)
    }

    func setProcessor(_ change: (inout Processor) -> Void) { state.withLock { change(&$0.processor) } }
}

/// Presets generated on request, named after the profile number, variant and tech level.
final class FakePresetSource: PresetSource {
    private let state = Mutex<(profile: Int, unavailable: Set<PresetVariant>, fetches: [String])>((1, [], []))

    func preset(_ variant: PresetVariant, for techLevel: TechLevel) async throws -> PersonalizationPreset {
        try state.withLock { state in
            state.fetches.append("\(variant)@\(techLevel.value)")
            guard !state.unavailable.contains(variant) else { throw TestError("no \(variant) preset") }
            return Self.preset(profile: state.profile, variant, techLevel)
        }
    }

    static func preset(profile: Int = 1, _ variant: PresetVariant, _ techLevel: TechLevel) -> PersonalizationPreset {
        PersonalizationPreset(id: "profile\(profile)-\(variant)", variant: variant, techLevel: techLevel,
                              payload: PresetPayload(techLevel: techLevel, bands: techLevel.bandCentres.map {
                                  BandDynamics(centre: $0, gain: Double(profile))
                              }))
    }

    var fetches: [String] { state.withLock { $0.fetches } }
    func submitProfile(_ number: Int) { state.withLock { $0.profile = number } }
    func makeUnavailable(_ variants: Set<PresetVariant>) { state.withLock { $0.unavailable = variants } }
}

let techLevel3 = try! TechLevel(3)

/// What a controller under test runs on: a manual clock, a fake handler at tech level 3 and a
/// fake preset source. One fixture for the controller, invalidation and recommendation suites,
/// so that they build their controllers alike; a suite holds one, so every test gets new fakes.
struct ControllerFakes {
    let clock = ManualClock()
    let handler = FakeHandler(techLevel: techLevel3)
    let presets = FakePresetSource()

    /// A controller on these fakes.
    func makeController() -> ProcessingController {
        ProcessingController(handler: handler, presetSource: presets, clock: clock)
    }
}
