extension OSCArgument {
    /// The argument as a number: float, double, int32 or int64; nil for anything else.
    public var numericValue: Double? {
        switch self {
        case .float(let v): Double(v)
        case .double(let v): v
        case .int32(let v): Double(v)
        case .int64(let v): Double(v)
        default: nil
        }
    }

    /// The argument as an integer: int32, int64, or a float with an integral value; nil for
    /// anything else.
    public var integerValue: Int? {
        switch self {
        case .int32(let v): Int(v)
        case .int64(let v): Int(clamping: v)
        case .float(let v) where v.rounded() == v && abs(v) < 1e6: Int(v)
        default: nil
        }
    }
}
