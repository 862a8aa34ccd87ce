/// What the processor can do: its tech level (number of bands, compression or not).
///
/// Presets are generated for a tech level, and a session rejects presets made for another.
/// Read it from the processing system before activating a session.
public struct TechLevel: Sendable, Hashable, CustomStringConvertible {
    /// The valid tech levels.
    public static let range: ClosedRange<Int> = 1...4

    /// 1…4.
    public let value: Int

    /// Throws `TechLevelError.invalidTechLevel` outside `range`.
    public init(_ value: Int) throws(TechLevelError) {
        guard Self.range.contains(value) else { throw .invalidTechLevel(value) }
        self.value = value
    }

    /// `tech level 3`.
    public var description: String { "tech level \(value)" }
}

extension TechLevel: Codable {
    /// Decodes a bare tech level number, validated.
    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(Int.self))
    }

    /// Encodes the bare tech level number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// Why a tech level was refused.
public enum TechLevelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A tech level outside `TechLevel.range` (1…4).
    case invalidTechLevel(Int)

    public var description: String {
        switch self {
        case .invalidTechLevel(let level):
            "tech level \(level) is outside \(TechLevel.range.lowerBound)…\(TechLevel.range.upperBound)"
        }
    }
}
