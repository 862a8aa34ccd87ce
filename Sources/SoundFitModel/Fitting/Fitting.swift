/// What the processor can do: its tech level (number of bands, compression or not).
///
/// Presets are generated for a tech level, and a session rejects presets made for another.
/// Read it from the processing system before activating a session.
public struct Fitting: Sendable, Hashable, CustomStringConvertible {
    /// The valid tech levels.
    public static let techLevels: ClosedRange<Int> = 1...4

    /// 1…4.
    public let techLevel: Int

    /// Throws `FittingError.invalidTechLevel` outside `techLevels`.
    public init(techLevel: Int) throws(FittingError) {
        guard Self.techLevels.contains(techLevel) else { throw .invalidTechLevel(techLevel) }
        self.techLevel = techLevel
    }

    /// `tech level 3`.
    public var description: String { "tech level \(techLevel)" }
}

extension Fitting: Codable {
    /// Decodes a bare tech level number, validated.
    public init(from decoder: any Decoder) throws {
        try self.init(techLevel: decoder.singleValueContainer().decode(Int.self))
    }

    /// Encodes the bare tech level number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(techLevel)
    }
}

/// Why a fitting was refused.
public enum FittingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A tech level outside `Fitting.techLevels` (1…4).
    case invalidTechLevel(Int)

    public var description: String {
        switch self {
        case .invalidTechLevel(let level):
            "tech level \(level) is outside \(Fitting.techLevels.lowerBound)…\(Fitting.techLevels.upperBound)"
        }
    }
}
