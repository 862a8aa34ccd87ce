/// What a processor can do at a tech level (our definition, `shared/reference/hearing.md`):
///
/// | tech level | bands | processing |
/// | --- | --- | --- |
/// | 1 | 4 (500, 1k, 2k, 4k) | static EQ only |
/// | 2 | 6 (octaves 250…8k) | EQ + compression |
/// | 3 | 8 (250, 500, 1k, 1.5k, 2k, 3k, 4k, 6k) | compression + expansion + per-band limiter |
/// | 4 | 12 (half octaves 250…11.3k) | as 3, per-band attack/release |
public struct TechLevel: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public static let range = 1...4

    public init(_ rawValue: Int) throws(TechLevelError) {
        guard Self.range.contains(rawValue) else { throw TechLevelError(value: rawValue) }
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { "tech level \(rawValue)" }

    /// Band centre frequencies in Hz.
    public var bandCentres: [Double] {
        switch rawValue {
        case 1: [500, 1000, 2000, 4000]
        case 2: [250, 500, 1000, 2000, 4000, 8000]
        case 3: [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
        default: (0..<12).map { 250 * pow(2, Double($0) / 2) }
        }
    }

    public var compresses: Bool { rawValue >= 2 }
    public var expands: Bool { rawValue >= 3 }
    public var limits: Bool { rawValue >= 3 }
    /// Per-band attack and release (lower levels share one pair).
    public var perBandTimeConstants: Bool { rawValue >= 4 }
}

public struct TechLevelError: Error, Equatable, CustomStringConvertible {
    public var value: Int
    public var description: String { "tech level must be 1…4, got \(value)" }
}

#if canImport(Glibc)
import Glibc
#endif
