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
