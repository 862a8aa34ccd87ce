/// A parameter value as the control surfaces see it, in native units.
public enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case float(Float)
    case int(Int)
    /// One of a fixed set of names (enumerations such as the filter type).
    case choice(String)

    public var description: String {
        switch self {
        case .bool(let value): value ? "1" : "0"
        case .float(let value): "\(value)"
        case .int(let value): "\(value)"
        case .choice(let value): value
        }
    }
}
