import OSCCore
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

extension ParameterDescriptor {
    /// The value a set of this parameter asks for: the argument coerced to the entry's kind, or
    /// for its fader address (`normalized`) read through its taper. A read-only parameter
    /// refuses every set. The one reading of a set's argument, for the OSC surface and for
    /// `soundfit render --set`; whether the parameter takes the value now is the control's check.
    public func requestedValue(from argument: OSCArgument, normalized: Bool) throws(ParameterError) -> ParameterValue {
        guard access == .readWrite else { throw .readOnly(address: address) }
        return normalized ? try FaderTaper.value(from: argument, for: self) : try kind.coerce(argument, address: address)
    }
}

extension ParameterKind {
    /// Coerces an OSC argument to a value of this kind: booleans from T/F, int or float
    /// (non-zero = true); numbers from int or float; choices from strings or symbols.
    ///
    /// A number is range-checked as received, before it is converted: a double just outside a
    /// float range (`20000.000000001`), or one that would round to zero (`-1e-300` for 0…1), is
    /// rejected, never rounded into the range. Values inside the range are checked again, by
    /// the parameter's entry, after conversion.
    public func coerce(_ argument: OSCArgument, address: String) throws(ParameterError) -> ParameterValue {
        try checkRangeAsReceived(argument, address: address)
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

    /// Rejects a number outside this kind's range in the precision it arrived in. The message is
    /// the one the entry's own check gives (the value as sent, the range as the entry has it).
    private func checkRangeAsReceived(_ argument: OSCArgument, address: String) throws(ParameterError) {
        let received: Double, text: String
        switch argument {
        case .double(let value): (received, text) = (value, "\(value)")
        case .float(let value): (received, text) = (Double(value), "\(value)")
        case .int32(let value): (received, text) = (Double(value), "\(value)")
        case .int64(let value): (received, text) = (Double(value), "\(value)")
        default: return
        }
        let contains: Bool, rangeText: String
        switch self {
        case .float(let bounds):
            contains = (Double(bounds.lowerBound)...Double(bounds.upperBound)).contains(received)
            rangeText = "\(bounds.lowerBound)…\(bounds.upperBound)"
        case .int(let bounds):
            contains = (Double(bounds.lowerBound)...Double(bounds.upperBound)).contains(received)
            rangeText = "\(bounds.lowerBound)…\(bounds.upperBound)"
        default:
            return
        }
        guard received.isFinite else { throw .notFinite(address: address) }
        guard contains else { throw .outOfRange(address: address, value: text, range: rangeText) }
    }
}
