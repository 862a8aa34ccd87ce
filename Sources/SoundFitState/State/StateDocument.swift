import Foundation
import SoundFitModel
import SoundFitHearing
import SoundFitJSON
import SoundFitProcessing

/// SoundFit's complete state, as an AUv3 audio unit's `fullState`: what `soundfit state export` writes,
/// `import` reads, and `DurableStateStore` keeps across restarts.
///
/// File format (`soundfit.state`, version 1):
///
/// ```json
/// {
///   "format": "soundfit.state",
///   "version": 1,
///   "parameters": {"/processing/enabled": true, "/processing/intensity": 0.75, …},
///   "delivery": {"style": "discrete", "settle_seconds": 0.2, "timeout_seconds": 10},
///   "session": {"mode": "fine_tuning", "tech_level": 3},
///   "current_patch": {"number": 1, "name": "Speech clarity", "modified": false},
///   "hearing_profile": {"version": 1, "left": [{"db_hl": 30, "hz": 500}, …]},
///   "presets": [{"version": 1, "rule": "…", "tech_level": 3, "variant": "default", …}],
///   "calibration_db_spl": 100,
///   "midi_mappings": [{"address": "/output/gain", "channel": 1, "controller": 7}]
/// }
/// ```
///
/// - `parameters`: every writable parameter (missing ones take their defaults on reading).
/// - `delivery`: `continuous` or `discrete` (`settle_seconds` only for discrete), and the
///   delivery timeout.
/// - `session`: the configuration the processing session is activated with.
/// - `current_patch`, `hearing_profile`: optional (absent or null when there is none).
/// - `presets`: the personalization presets generated from the profile, for information (and
///   for other tools); importing regenerates them from the profile instead of using these.
///
/// - `midi_mappings`: optional (absent: none): MIDI control changes bound to parameters, channel
///   1…16, controller 0…127, at most `MIDIMapping.maximumCount`; a pair appears once.
///
/// - `calibration_db_spl`: optional, only in what `state export` writes (the calibration of the
///   document settings, which the presets were generated for); `state import` puts it back
///   into the document settings. `state.json` never holds it.
///
/// - `calibration`: optional, only in what `state export` writes: the earphone table and the
///   per-ear, per-frequency corrections of `calibration.json` (`CalibrationState`, without its
///   header); `state import` writes it back there.
///
/// - `recommendation_pending`: optional (absent: false): a hearing profile was submitted while no
///   session was active, and its recommendation (default preset, processing enabled) still
///   waits for the next session. Written only when true.
///
/// Document-level settings (calibration, channels, OSC) are kept apart: `DocumentSettings`.
public struct StateDocument: Sendable, Equatable {
    public static let format = "soundfit.state"
    public static let formatVersion = 1

    /// Address → value of every writable parameter.
    public var parameters: [String: ParameterValue]
    /// Delivery style (with settle time) and delivery timeout.
    public var delivery: DeliveryConfiguration
    /// Personalization mode and tech level of the processing session.
    public var session: ProcessingConfiguration
    public var currentPatch: CurrentPatch?
    public var hearingProfile: HearingProfile?
    /// Informational: the presets generated from `hearingProfile`.
    public var presets: [PresetPayload]
    /// The document settings' calibration, carried by an export (nil in `state.json`).
    public var calibration: Double?
    /// MIDI control changes bound to parameters, in `MIDIMapping` order.
    public var midiMappings: [MIDIMapping] = []
    /// The calibration table and earphone table (`calibration.json`), carried by an export
    /// (key `calibration`; nil in `state.json`).
    public var calibrationState: CalibrationState?
    /// The recommendation of a profile submitted while no session was active waits for the
    /// next session (key `recommendation_pending`).
    public var recommendationPending = false

    public init(parameters: [String: ParameterValue], delivery: DeliveryConfiguration = .default,
                session: ProcessingConfiguration, currentPatch: CurrentPatch? = nil,
                hearingProfile: HearingProfile? = nil, presets: [PresetPayload] = []) {
        self.parameters = parameters
        self.delivery = delivery
        self.session = session
        self.currentPatch = currentPatch
        self.hearingProfile = hearingProfile
        self.presets = presets
    }

    /// The state of a fresh start: every writable parameter at its default, default delivery,
    /// `session` as configured, no patch, no profile.
    public static func defaults(descriptors: [ParameterDescriptor], session: ProcessingConfiguration) -> StateDocument {
        StateDocument(
            parameters: Dictionary(ParameterCoding.writable(descriptors).map { ($0.address, $0.defaultValue) },
                                   uniquingKeysWith: { first, _ in first }),
            session: session)
    }

    /// Checks what `encoded` cannot express or `decode` would reject: parameter values against
    /// `descriptors` (complete and valid) and the delivery configuration.
    public func validate(descriptors: [ParameterDescriptor], file: String = "state") throws(DocumentError) {
        var problems: [DocumentProblem] = []
        do {
            try ParameterCoding.validate(parameters, descriptors: descriptors, file: file)
        } catch {
            problems = error.problems
        }
        var reader = DocumentReader(file: file)
        if case .discrete(let settle) = delivery.deliveryStyle, !Self.settleRange.contains(settle.seconds) {
            reader.fail("delivery.settle_seconds", "\(NumberText.format(settle.seconds)) is out of range \(Self.describe(Self.settleRange))")
        }
        if !Self.timeoutRange.contains(delivery.deliveryTimeout.seconds) {
            reader.fail("delivery.timeout_seconds",
                        "\(NumberText.format(delivery.deliveryTimeout.seconds)) is out of range \(Self.describe(Self.timeoutRange))")
        }
        problems += reader.problems
        if !problems.isEmpty { throw DocumentError(problems) }
    }

    /// The settle times a document may hold (seconds).
    static let settleRange: ClosedRange<Double> = 0...86_400
    /// The delivery timeouts a document may hold (seconds).
    static let timeoutRange: ClosedRange<Double> = 0.001...86_400

    static func describe(_ range: ClosedRange<Double>) -> String {
        "\(NumberText.format(range.lowerBound))…\(NumberText.format(range.upperBound))"
    }
}

extension Duration {
    /// `seconds` rounded to nanoseconds (finite, |seconds| < 9e9).
    static func seconds(exactly seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
