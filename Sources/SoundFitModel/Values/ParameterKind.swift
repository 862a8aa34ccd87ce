/// What kind of value a parameter holds, with its valid range.
public enum ParameterKind: Sendable, Equatable {
    case bool
    case float(ClosedRange<Float>)
    case int(ClosedRange<Int>)
    case choice([String])

    /// The type name surfaces report (`/list`, the documentation).
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
