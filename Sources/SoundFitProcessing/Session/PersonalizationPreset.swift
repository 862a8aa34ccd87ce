import SoundFitModel

/// The payload the personalization processor applies, generated from a hearing profile for
/// one tech level.
///
/// Opaque to the processing model: it only checks `fitting` against the session and passes the
/// preset to the applicators. The payload's keys (per-ear, per-band gains and compression
/// settings) belong to the hearing-profile code that generates presets.
public struct PersonalizationPreset: Sendable, Hashable, CustomStringConvertible {
    /// Identifies the preset (e.g. the profile it was generated from plus the variant).
    public var id: String
    /// Which variant of the profile's presets this is.
    public var variant: PresetVariant
    /// The tech level the preset was generated for.
    public var fitting: Fitting
    /// Named arrays of values for the processor.
    public var payload: [String: [Float]]

    /// A preset.
    public init(id: String, variant: PresetVariant, fitting: Fitting, payload: [String: [Float]] = [:]) {
        self.id = id
        self.variant = variant
        self.fitting = fitting
        self.payload = payload
    }

    /// `default preset 'id' (tech level 3)`.
    public var description: String { "\(variant) preset '\(id)' (\(fitting))" }
}

/// Where personalization presets come from (the hearing profile's generator, a server, a file).
///
/// The session's `preset` parameter is remote: `load()` and `loadPreset(_:)` fetch from here,
/// then apply. Called from tasks, never under a lock; may take long (it is not bounded by the
/// delivery timeout; bound it yourself if it talks to a network).
public protocol PresetSource: Sendable {
    /// The preset of `variant` for `fitting`, or an error (e.g. no hearing profile yet, or the
    /// variant cannot be generated for this profile).
    func preset(_ variant: PresetVariant, for fitting: Fitting) async throws -> PersonalizationPreset
}
