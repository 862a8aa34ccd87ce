import Foundation

/// A listener's hearing: an audiogram per ear. An ear without an audiogram gets the other
/// ear's (a common fitting default when only one ear was tested).
public struct HearingProfile: Sendable, Equatable, Codable {
    public static let formatVersion = 1

    public var left: Audiogram?
    public var right: Audiogram?

    public init(left: Audiogram?, right: Audiogram?) throws(AudiogramError) {
        guard left != nil || right != nil else { throw .noEar }
        self.left = left
        self.right = right
    }

    /// The audiogram used for `ear`.
    public func audiogram(for ear: Ear) -> Audiogram {
        switch ear {
        case .left: (left ?? right)!
        case .right: (right ?? left)!
        }
    }

    private enum CodingKeys: String, CodingKey { case version, left, right }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decodeIfPresent(Int.self, forKey: .version) ?? Self.formatVersion
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container,
                debugDescription: "unsupported hearing profile version \(version) (expected \(Self.formatVersion))")
        }
        try self.init(left: container.decodeIfPresent(Audiogram.self, forKey: .left),
                      right: container.decodeIfPresent(Audiogram.self, forKey: .right))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encodeIfPresent(left, forKey: .left)
        try container.encodeIfPresent(right, forKey: .right)
    }

    /// Reads a profile from JSON: `{"version": 1, "left": [{"hz": 500, "db_hl": 35}, …], "right": […]}`.
    /// Errors name the problem (the audiogram rule broken, or the JSON path at fault).
    public static func load(jsonData: Data) throws(ProfileLoadingError) -> HearingProfile {
        do {
            return try JSONDecoder().decode(HearingProfile.self, from: jsonData)
        } catch let error as AudiogramError {
            throw ProfileLoadingError(message: error.description)
        } catch let DecodingError.dataCorrupted(context) {
            throw ProfileLoadingError(message: describe(context))
        } catch let DecodingError.keyNotFound(key, context) {
            throw ProfileLoadingError(message: "missing \(key.stringValue) at \(path(context.codingPath))")
        } catch let DecodingError.typeMismatch(_, context) {
            throw ProfileLoadingError(message: describe(context))
        } catch let DecodingError.valueNotFound(_, context) {
            throw ProfileLoadingError(message: describe(context))
        } catch {
            throw ProfileLoadingError(message: "\(error)")
        }
    }

    private static func describe(_ context: DecodingError.Context) -> String {
        if let underlying = context.underlyingError as? AudiogramError { return underlying.description }
        let location = path(context.codingPath)
        return location.isEmpty ? context.debugDescription : "\(location): \(context.debugDescription)"
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}

/// A hearing profile file could not be used.
public struct ProfileLoadingError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
