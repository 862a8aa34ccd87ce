/// A JSON value as SoundFit's human-edited files hold it.
///
/// Unlike `JSONSerialization`, it keeps what a person wrote: the order of an object's keys (so a
/// written file lists parameters in address-space order), the literal text of numbers (so
/// `0.7071` is written back as `0.7071`, not `0.707099974155426`), and the difference between
/// `true` and `1`.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text (valid JSON number syntax).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A number written the way a person would: integral values without a fraction (`1000`),
    /// others in the shortest form that reads back as the same `Float` (`0.7071`).
    public static func number(_ value: Float) -> JSONValue { .number(NumberText.format(value)) }
    /// A number in the shortest form that reads back as the same `Double`.
    public static func number(_ value: Double) -> JSONValue { .number(NumberText.format(value)) }
    public static func number(_ value: Int) -> JSONValue { .number(String(value)) }
    /// A number that reads as a float: always with a fraction or an exponent (`1600.0`, `0.7071`,
    /// `1e+08`), for readers that take `1600` for an integer (OSCQuery clients, for `TYPE` `f`).
    /// A non-finite value, which JSON cannot write, is `null`.
    public static func floatNumber(_ value: Float) -> JSONValue {
        value.isFinite ? .number(NumberText.formatFloat(value)) : .null
    }

    /// "a string \"abc\"", "true", "an object", … for messages about a value of the wrong kind.
    public var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text
        case .string(let text): "\"\(NumberText.escapedForMessage(text))\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The number's value, for `.number`.
    public var double: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }
}

/// A JSON object whose members keep their order.
public struct JSONObject: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public var members: [Member]

    public init(_ members: [Member] = []) {
        self.members = members
    }

    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        members = pairs.map { Member(key: $0.key, value: $0.value) }
    }

    /// The first member named `key`. (The parser rejects duplicate keys.)
    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    public var keys: [String] { members.map(\.key) }

    /// Appends a member; `nil` appends nothing (an absent optional field).
    public mutating func append(_ key: String, _ value: JSONValue?) {
        if let value { members.append(Member(key: key, value: value)) }
    }
}

/// Number and text formatting shared by the writer and by error messages.
public enum NumberText {
    /// `1000`, `-24`, `0.7071`, `1e-05`: integral values (below 1e7) without a fraction, others
    /// in Swift's shortest round-tripping form.
    public static func format(_ value: Float) -> String {
        if value == value.rounded(), abs(value) < 1e7 { return String(Int(value)) }
        return "\(value)"
    }

    /// `1600.0`, `-60.0`, `0.7071`, `1e+08`: Swift's shortest round-tripping form, which always
    /// has a fraction or an exponent (a finite `value` only).
    public static func formatFloat(_ value: Float) -> String { "\(value)" }

    /// As `format(_: Float)`, for doubles (integral values below 1e15).
    public static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `20…20000`, `-24…24`, `0.1…18`.
    public static func format(_ range: ClosedRange<Float>) -> String {
        "\(format(range.lowerBound))…\(format(range.upperBound))"
    }

    /// `0.001…86400`, `80…130`.
    public static func format(_ range: ClosedRange<Double>) -> String {
        "\(format(range.lowerBound))…\(format(range.upperBound))"
    }

    /// Text quoted in a message: control characters shown as `\u{A}`, long text shortened.
    public static func escapedForMessage(_ text: String, limit: Int = 80) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        if result.count > limit { result = String(result.prefix(limit)) + "…" }
        return result
    }
}
