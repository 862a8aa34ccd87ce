/// Which of a hearing profile's personalization presets: FineTuning offers `default`, `up` and `down`,
/// SinglePreset only `default`.
public enum PresetVariant: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// The preset fitted to the hearing profile.
    case `default`
    /// A stronger variant (FineTuning only).
    case up
    /// A milder variant (FineTuning only).
    case down

    /// The raw name (`default`, `up`, `down`), as files and surfaces spell it.
    public var description: String { rawValue }

    /// The value of `/processing/preset` (and of a patch's) when no preset is applied.
    public static let noneName = "none"
}

