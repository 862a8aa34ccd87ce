import SoundFitModel

extension ParameterValue {
    /// The OSC form of a value: booleans as int 0/1, choices as strings.
    public var oscArgument: OSCArgument {
        switch self {
        case .bool(let value): .int32(value ? 1 : 0)
        case .float(let value): .float(value)
        case .int(let value): .int32(Int32(clamping: value))
        case .choice(let value): .string(value)
        }
    }
}

extension ParameterKind {
    /// Coerces an OSC argument to a value of this kind: booleans from T/F, int or float
    /// (non-zero = true); numbers from int or float; choices from strings or symbols.
    /// The result is not yet range-checked.
    public func coerce(_ argument: OSCArgument, address: String) throws(ParameterError) -> ParameterValue {
        switch (self, argument) {
        case (.bool, .bool(let value)): return .bool(value)
        case (.bool, .int32(let value)): return .bool(value != 0)
        case (.bool, .int64(let value)): return .bool(value != 0)
        case (.bool, .float(let value)) where value.isFinite: return .bool(value != 0)
        case (.bool, .double(let value)) where value.isFinite: return .bool(value != 0)
        case (.float, .float(let value)): return .float(value)
        case (.float, .double(let value)): return .float(Float(value))
        case (.float, .int32(let value)): return .float(Float(value))
        case (.float, .int64(let value)): return .float(Float(value))
        case (.int, .int32(let value)): return .int(Int(value))
        case (.int, .int64(let value)): return .int(Int(clamping: value))
        case (.int, .float(let value)) where value.rounded() == value && abs(value) < 1e9: return .int(Int(value))
        case (.int, .double(let value)) where value.rounded() == value && abs(value) < 1e9: return .int(Int(value))
        case (.choice, .string(let value)), (.choice, .symbol(let value)): return .choice(value)
        default:
            throw .wrongType(address: address, expected: typeName)
        }
    }
}
