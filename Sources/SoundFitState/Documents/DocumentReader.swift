import Foundation

/// Reads the fields of one JSON document and collects every problem, so one pass reports all
/// of a file's mistakes instead of the first.
struct DocumentReader {
    let file: String
    private(set) var problems: [DocumentProblem] = []

    init(file: String) {
        self.file = file
    }

    mutating func fail(_ field: String?, _ message: String) {
        problems.append(DocumentProblem(file: file, field: field, message: message))
    }

    /// Throws the problems collected, if any.
    func check() throws(DocumentError) {
        if !problems.isEmpty { throw DocumentError(problems) }
    }

    /// Parses `data` and checks the `format` and `version` fields: the top-level object, or
    /// nil after recording why not.
    mutating func header(_ data: Data, format: String, version: Int) -> JSONObject? {
        let root: JSONValue
        do {
            root = try JSONParser.parse(data)
        } catch {
            fail(nil, error.description)
            return nil
        }
        guard case .object(let object) = root else {
            fail(nil, "expected a JSON object, got \(root.summary)")
            return nil
        }
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
    mutating func rejectUnknownKeys(_ object: JSONObject, known: [String], prefix: String = "") {
        for key in object.keys where !known.contains(key) {
            fail(prefix + key, "unknown field (known fields: \(known.joined(separator: ", ")))")
        }
    }

    mutating func string(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true) -> String? {
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

    mutating func bool(_ object: JSONObject, _ key: String, prefix: String = "") -> Bool? {
        switch object[key] {
        case .bool(let value)?: return value
        case nil: fail(prefix + key, "missing (expected true or false)")
        case let other?: fail(prefix + key, "expected true or false, got \(other.summary)")
        }
        return nil
    }

    /// An integral number within `range`.
    mutating func integer(_ object: JSONObject, _ key: String, in range: ClosedRange<Int>, prefix: String = "") -> Int? {
        guard let value = object[key] else {
            fail(prefix + key, "missing (expected an integer)")
            return nil
        }
        return integer(value, in: range, field: prefix + key)
    }

    mutating func integer(_ value: JSONValue, in range: ClosedRange<Int>, field: String) -> Int? {
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
    mutating func number(_ object: JSONObject, _ key: String, in range: ClosedRange<Double>, prefix: String = "",
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
            fail(prefix + key, "\(value.summary) is out of range \(NumberText.format(range.lowerBound))…\(NumberText.format(range.upperBound))")
            return nil
        }
        return number
    }

    /// A nested object, or nil (recorded unless absent and not required).
    mutating func object(_ object: JSONObject, _ key: String, prefix: String = "", required: Bool = true) -> JSONObject? {
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
}
