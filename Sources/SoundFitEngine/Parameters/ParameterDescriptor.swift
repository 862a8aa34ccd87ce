/// What kind of value a parameter holds, with its valid range.
public enum ParameterKind: Sendable, Equatable {
    case bool
    case float(ClosedRange<Float>)
    case int(ClosedRange<Int>)
    case choice([String])

    /// The OSC-facing type name used by `/list` and the docs.
    public var typeName: String {
        switch self {
        case .bool: "bool"
        case .float: "float"
        case .int: "int"
        case .choice: "string"
        }
    }
}

/// Whether a control surface may set a parameter.
public enum ParameterAccess: String, Sendable, Equatable {
    case readWrite = "rw"
    case readOnly = "r"
}

/// One entry of the declarative parameter registry: the single source for OSC addresses,
/// validation, `/list` discovery and the generated documentation.
public struct ParameterDescriptor: Sendable, Equatable {
    public let address: String
    public let kind: ParameterKind
    public let defaultValue: ParameterValue
    public let unit: String
    public let access: ParameterAccess
    public let summary: String

    public init(address: String, kind: ParameterKind, defaultValue: ParameterValue, unit: String = "",
                access: ParameterAccess = .readWrite, summary: String) {
        self.address = address
        self.kind = kind
        self.defaultValue = defaultValue
        self.unit = unit
        self.access = access
        self.summary = summary
    }

    /// Checks that `value` has this parameter's kind and lies in its range.
    /// Values are rejected, never clamped.
    public func validate(_ value: ParameterValue) throws(ParameterError) {
        switch (kind, value) {
        case (.bool, .bool):
            return
        case (.float(let range), .float(let v)):
            guard v.isFinite else { throw .notFinite(address: address) }
            guard range.contains(v) else {
                throw .outOfRange(address: address, value: "\(v)", range: "\(range.lowerBound)…\(range.upperBound)")
            }
        case (.int(let range), .int(let v)):
            guard range.contains(v) else {
                throw .outOfRange(address: address, value: "\(v)", range: "\(range.lowerBound)…\(range.upperBound)")
            }
        case (.choice(let names), .choice(let v)):
            guard names.contains(v) else {
                throw .unknownChoice(address: address, value: v, choices: names)
            }
        default:
            throw .wrongType(address: address, expected: kind.typeName)
        }
    }
}

/// Why a parameter value was rejected. The messages are what `/error` carries.
public enum ParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownAddress(String)
    case wrongType(address: String, expected: String)
    case outOfRange(address: String, value: String, range: String)
    case notFinite(address: String)
    case unknownChoice(address: String, value: String, choices: [String])
    case readOnly(address: String)

    public var description: String {
        switch self {
        case .unknownAddress(let address): "unknown address \(address)"
        case .wrongType(let address, let expected): "\(address) expects a \(expected)"
        case .outOfRange(let address, let value, let range): "\(address): \(value) is out of range \(range)"
        case .notFinite(let address): "\(address): value must be a finite number"
        case .unknownChoice(let address, let value, let choices):
            "\(address): unknown value '\(value)'; expected one of \(choices.joined(separator: " "))"
        case .readOnly(let address): "\(address) is read-only"
        }
    }
}
