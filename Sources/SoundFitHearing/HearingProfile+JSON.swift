import Foundation
import SoundFitJSON

/// A hearing profile as JSON: the `--profile` file, `soundfit presets --audiogram FILE`, and the
/// `hearing_profile` of a state document.
extension HearingProfile {
    /// Reads a profile file:
    ///
    /// ```json
    /// {"version": 1, "left": [{"hz": 500, "db_hl": 35}, …], "right": […]}
    /// ```
    ///
    /// `version` may be left out; an ear may be absent or null (it gets the other ear's
    /// audiogram); fields SoundFit does not know are ignored (other tools add names and dates).
    /// The text is read as leniently as Foundation's `JSONDecoder` read it before
    /// (`JSONParser.Strictness.compatible`), so every profile accepted then still is.
    /// Every problem names `file`, the line and column, and the field: `profile.json: line 3,
    /// column 12: left[2].db_hl: expected a number, got "35"`.
    public static func decode(_ data: Data, file: String? = nil) throws(DocumentError) -> HearingProfile {
        var reader = DocumentReader(file: file)
        guard let root = reader.parse(data, strictness: .compatible) else { throw DocumentError(reader.problems) }
        let profile = read(root, field: "", reader: &reader)
        try reader.check()
        return profile!
    }

    /// Reads the profile at `field` of a document (`""` for the root), problems to `reader`.
    public static func read(_ value: JSONValue, field: String, reader: inout DocumentReader) -> HearingProfile? {
        let whole = field.isEmpty ? nil : field
        guard case .object(let object) = value else {
            reader.fail(whole, "expected a hearing profile object ({\"version\": 1, \"left\": […], \"right\": […]}), got \(value.summary)")
            return nil
        }
        let prefix = field.isEmpty ? "" : field + "."
        if let version = object["version"], version != .null,
           let number = reader.integer(version, in: Int.min...Int.max, field: prefix + "version"), number != formatVersion {
            reader.fail(prefix + "version", "unsupported hearing profile version \(number) (expected \(formatVersion))")
        }
        let problemsBefore = reader.problems.count
        let left = readAudiogram(object, "left", prefix: prefix, reader: &reader)
        let right = readAudiogram(object, "right", prefix: prefix, reader: &reader)
        guard reader.problems.count == problemsBefore else { return nil }
        do {
            return try HearingProfile(left: left, right: right)
        } catch {
            reader.fail(whole, error.description)
            return nil
        }
    }

    /// An ear's audiogram: nil when absent or null, or after recording what is wrong.
    private static func readAudiogram(_ object: JSONObject, _ ear: String, prefix: String,
                                      reader: inout DocumentReader) -> Audiogram? {
        let field = prefix + ear
        guard let elements = reader.array(object, ear, prefix: prefix, required: false,
                                          expecting: "an array of {\"hz\": …, \"db_hl\": …} points") else { return nil }
        var points: [Audiogram.Point] = []
        var complete = true
        for (index, element) in elements.enumerated() {
            let pointField = JSONDocument.path(field, index: index)
            guard case .object(let point) = element else {
                reader.fail(pointField, "expected a point {\"hz\": …, \"db_hl\": …}, got \(element.summary)")
                complete = false
                continue
            }
            let hz = reader.number(point, "hz", prefix: pointField + ".")
            let level = reader.number(point, "db_hl", prefix: pointField + ".")
            guard let hz, let level else {
                complete = false
                continue
            }
            points.append(Audiogram.Point(frequency: hz, threshold: level))
        }
        guard complete else { return nil }
        if let (index, error) = Audiogram.firstInvalidPoint(points) {
            let key = if case .levelOutOfRange = error { "db_hl" } else { "hz" }
            reader.fail(JSONDocument.path(JSONDocument.path(field, index: index), key: key), error.description)
            return nil
        }
        do {
            return try Audiogram(points: points)
        } catch {
            reader.fail(field, error.description)
            return nil
        }
    }

    /// The profile as JSON (keys sorted, as the files SoundFit wrote before: `left`, `right`,
    /// `version`; points as `{"db_hl": 35, "hz": 500}`).
    public var json: JSONValue {
        func points(_ audiogram: Audiogram) -> JSONValue {
            .array(audiogram.points.map {
                .object(JSONObject(["db_hl": .number($0.threshold), "hz": .number($0.frequency)]))
            })
        }
        var object = JSONObject()
        object.append("left", left.map(points))
        object.append("right", right.map(points))
        object.append("version", .number(Self.formatVersion))
        return .object(object)
    }

    /// The profile as a file.
    public func encoded() -> Data { json.fileData() }
}
