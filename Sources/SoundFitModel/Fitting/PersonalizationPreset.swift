/// A personalization preset: the payload the personalization processor applies, generated from
/// a hearing profile for one tech level, with what the processing model needs to know about it.
///
/// The processing model reads only `id`, `variant` and `techLevel` (checked against the
/// session) and passes the preset to its applicators, which apply the payload. Presets are equal
/// when their id, variant and tech level are: the id names the payload.
public struct PersonalizationPreset: Sendable, Hashable, CustomStringConvertible {
    /// Identifies the preset (e.g. the profile it was generated from plus the variant).
    public var id: String
    /// Which variant of the profile's presets this is.
    public var variant: PresetVariant
    /// The tech level the preset was generated for.
    public var techLevel: TechLevel
    /// What the processor applies (nil: a preset that only names itself, as the processing
    /// model's own tests use).
    public var payload: PresetPayload?

    /// A preset.
    public init(id: String, variant: PresetVariant, techLevel: TechLevel, payload: PresetPayload? = nil) {
        self.id = id
        self.variant = variant
        self.techLevel = techLevel
        self.payload = payload
    }

    public static func == (lhs: PersonalizationPreset, rhs: PersonalizationPreset) -> Bool {
        lhs.id == rhs.id && lhs.variant == rhs.variant && lhs.techLevel == rhs.techLevel
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(variant)
        hasher.combine(techLevel)
    }

    /// `default preset 'id' (tech level 3)`.
    public var description: String { "\(variant) preset '\(id)' (\(techLevel))" }
}

/// Where personalization presets come from (the hearing profile's generator, a server, a file).
///
/// The session's `preset` parameter is remote: `load()` and `loadPreset(_:)` fetch from here,
/// then apply. Called from tasks, never under a lock; may take long (it is not bounded by the
/// delivery timeout; bound it yourself if it talks to a network).
public protocol PresetSource: Sendable {
    /// The preset of `variant` for `techLevel`, or an error (e.g. no hearing profile yet, or the
    /// variant cannot be generated for this profile).
    func preset(_ variant: PresetVariant, for techLevel: TechLevel) async throws -> PersonalizationPreset
}
