import SoundFitModel
import SoundFitProcessing

/// Values a surface holds for some parameters can no longer be relied on, and why: it should
/// query them again. The runtime publishes one on every event that makes values stale
/// (`SoundFitRuntime.invalidationUpdates()`), after the processing controller recovered the
/// session's state in the engine (`ProcessingController.invalidate(parameters:cause:)`).
public struct ParameterInvalidation: Sendable, Equatable, CustomStringConvertible {
    /// The stale parameters' addresses, in address-space order.
    public var addresses: [String]
    public var cause: InvalidationCause

    public init(addresses: [String], cause: InvalidationCause) {
        self.addresses = addresses
        self.cause = cause
    }

    public var description: String { "\(addresses.joined(separator: " ")) (\(cause.rawValue))" }
}

/// Why values became stale. A fixed vocabulary (the raw values are what surfaces receive), so a
/// surface can switch on it and notifications of one cause can be coalesced.
public enum InvalidationCause: String, Error, Sendable, CaseIterable, CustomStringConvertible {
    /// A new hearing profile replaced the presets: the preset (same variant, new payload) and
    /// whether processing can be enabled.
    case hearingProfileReplaced = "hearing_profile_replaced"
    /// A session started with another tech level: the tech level, the preset regenerated for it,
    /// and whether processing can be enabled.
    case techLevelChanged = "tech_level_changed"
    /// The calibration changed: the preset is regenerated for it.
    case calibrationChanged = "calibration_changed"
    /// The JACK server went away and came back: the engine started over, every value was
    /// re-applied.
    case serverLostAndBack = "server_lost_and_back"
    /// The JACK server came back at another sample rate: as `serverLostAndBack`.
    case sampleRateChanged = "sample_rate_changed"

    public var description: String { rawValue }

    /// The parameters this cause makes stale, by session parameter (nil: a kernel parameter).
    var stale: [(name: SessionParameter.Name?, descriptor: ParameterDescriptor)] {
        let session = SessionParameter.Name.allCases.map { (name: $0, descriptor: ParameterModel.entry(for: $0)) }
        let staleSession: Set<SessionParameter.Name> = switch self {
        case .hearingProfileReplaced: [.preset, .canEnable]
        case .techLevelChanged: [.preset, .canEnable, .techLevel]
        case .calibrationChanged: [.preset]
        case .serverLostAndBack, .sampleRateChanged: Set(SessionParameter.Name.allCases)
        }
        let kernels: [(SessionParameter.Name?, ParameterDescriptor)] = switch self {
        case .serverLostAndBack, .sampleRateChanged: ParameterModel.kernels.map { (nil, $0) }
        default: []
        }
        return session.filter { staleSession.contains($0.name) }.map { ($0.name, $0.descriptor) } + kernels
    }
}
