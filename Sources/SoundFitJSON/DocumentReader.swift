import Foundation

/// Reads the fields of one JSON document and collects every problem, so one pass reports all
/// of a file's mistakes instead of the first. Each problem names the file, the field and, for
/// a document parsed from text, the line and column of the value at fault.
///
/// Fields are addressed by path (`JSONDocument`); the accessors take the object to read from
/// and the path of that object (`prefix`, `""` for the root).
public struct DocumentReader {
    public let file: String?
    public private(set) var problems: [DocumentProblem] = []
    /// The parsed text, for locations; nil for values built in code.
    private var document: JSONDocument?

    public init(file: String?) {
        self.file = file
    }

    /// Records a problem with `field` (nil: the whole document), located in the text.
    public mutating func fail(_ field: String?, _ message: String) {
        problems.append(DocumentProblem(file: file, location: field.flatMap { document?.location(of: $0) },
                                        field: field, message: message))
    }

    /// Throws the problems collected, if any.
    public func check() throws(DocumentError) {
        if !problems.isEmpty { throw DocumentError(problems) }
    }

    /// Parses `data`: its value, or nil after recording the syntax error.
    public mutating func parse(_ data: Data, strictness: JSONParser.Strictness = .strict) -> JSONValue? {
        do {
            let document = try JSONParser.parseDocument(data, strictness: strictness)
            self.document = document
            return document.root
        } catch {
            problems.append(DocumentProblem(file: file, location: error.location, field: nil,
                                            message: "invalid JSON: \(error.message)"))
            return nil
        }
    }

    /// Parses `data` as an object: the object, or nil after recording why not.
    public mutating func parseObject(_ data: Data, strictness: JSONParser.Strictness = .strict) -> JSONObject? {
        guard let root = parse(data, strictness: strictness) else { return nil }
        guard case .object(let object) = root else {
            fail(nil, "expected a JSON object, got \(root.summary)")
            return nil
        }
        return object
    }

    /// Parses `data` and checks the `format` and `version` fields: the top-level object, or
    /// nil after recording why not.
    public mutating func header(_ data: Data, format: String, version: Int) -> JSONObject? {
        guard let object = parseObject(data) else { return nil }
        switch object["format"] {
        case .string(format)?: break
        case nil: fail("format", "missing (expected \"\(format)\")")
        case let other?: fail("format", "expected \"\(format)\", got \(other.summary)")
        }
        switch object["version"] {
        case nil:
            fail("version", "missing (expected \(version))")
        case let value?:
            if value.double != Double(version) {
                fail("version", "\(value.summary) is not supported (this SoundFit reads version \(version))")
            }
        }
        return object
    }

    /// Reports every key of `object` that is not in `known`.
    public mutating func rejectUnknownKeys(_ object: JSONObject, known: [String], prefix: String = "") {
        for key in object.keys where !known.contains(key) {
            fail(prefix + key, "unknown field (known fields: \(known.joined(separator: ", ")))")
        }
    }

    public mutating func string(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true) -> String? {
        switch object[key] {
        case .string(let text)?: return text
        case nil, .null?:
            if required { fail(prefix + key, "missing (expected a string)") }
            return nil
        case let other?:
            fail(prefix + key, "expected a string, got \(other.summary)")
            return nil
        }
    }

    public mutating func bool(_ object: JSONObject, _ key: String, prefix: String = "") -> Bool? {
        switch object[key] {
        case .bool(let value)?: return value
        case nil: fail(prefix + key, "missing (expected true or false)")
        case let other?: fail(prefix + key, "expected true or false, got \(other.summary)")
        }
        return nil
    }

    /// An integral number within `range`.
    public mutating func integer(_ object: JSONObject, _ key: String, in range: ClosedRange<Int>, prefix: String = "") -> Int? {
        guard let value = object[key] else {
            fail(prefix + key, "missing (expected an integer)")
            return nil
        }
        return integer(value, in: range, field: prefix + key)
    }

    public mutating func integer(_ value: JSONValue, in range: ClosedRange<Int>, field: String) -> Int? {
        guard let number = value.double else {
            fail(field, "expected an integer, got \(value.summary)")
            return nil
        }
        guard number == number.rounded(), abs(number) < 1e15 else {
            fail(field, "\(value.summary) is not an integer")
            return nil
        }
        guard range.contains(Int(number)) else {
            fail(field, "\(value.summary) is out of range \(range.lowerBound)…\(range.upperBound)")
            return nil
        }
        return Int(number)
    }

    /// A finite number within `range`.
    public mutating func number(_ object: JSONObject, _ key: String, in range: ClosedRange<Double>, prefix: String = "",
                                required: Bool = true) -> Double? {
        guard let value = object[key], value != .null else {
            if required { fail(prefix + key, "missing (expected a number)") }
            return nil
        }
        guard let number = value.double else {
            fail(prefix + key, "expected a number, got \(value.summary)")
            return nil
        }
        guard number.isFinite, range.contains(number) else {
            fail(prefix + key, "\(value.summary) is out of range \(NumberText.format(range))")
            return nil
        }
        return number
    }

    /// A number, for a caller that checks it itself (it may be infinite: `1e400`).
    public mutating func number(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true) -> Double? {
        guard let value = object[key], value != .null else {
            if required { fail(prefix + key, "missing (expected a number)") }
            return nil
        }
        guard let number = value.double else {
            fail(prefix + key, "expected a number, got \(value.summary)")
            return nil
        }
        return number
    }

    /// A nested object, or nil (recorded unless absent and not required).
    public mutating func object(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true) -> JSONObject? {
        switch object[key] {
        case .object(let nested)?: return nested
        case nil, .null?:
            if required { fail(prefix + key, "missing (expected an object)") }
            return nil
        case let other?:
            fail(prefix + key, "expected an object, got \(other.summary)")
            return nil
        }
    }

    /// A nested array, or nil (recorded unless absent and not required).
    public mutating func array(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true,
                               expecting what: String = "an array") -> [JSONValue]? {
        switch object[key] {
        case .array(let elements)?: return elements
        case nil, .null?:
            if required { fail(prefix + key, "missing (expected \(what))") }
            return nil
        case let other?:
            fail(prefix + key, "expected \(what), got \(other.summary)")
            return nil
        }
    }
}
