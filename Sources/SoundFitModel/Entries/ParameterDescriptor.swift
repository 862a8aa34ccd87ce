/// One entry of the parameter model: everything SoundFit knows about one parameter, declared
/// once. OSC dispatch, `/list`, `soundfit parameters`, the generated documentation, patch and
/// state files, fader tapers and the engine's slots all derive from these entries (see
/// `ParameterModel`). A pure value: usable from any thread except the audio thread.
public struct ParameterDescriptor: Sendable, Equatable {
    /// The OSC address, also the key in patch and state files (`/filter/cutoff`).
    public let address: String
    /// The value's kind and its valid range.
    public let kind: ParameterKind
    public let defaultValue: ParameterValue
    /// Native unit (`Hz`, `dB`), empty when the value has none.
    public let unit: String
    public let access: ParameterAccess
    /// What the parameter does, one sentence for `/list` readers and the documentation.
    public let summary: String
    /// A short human name for surfaces that label controls ("Filter cutoff").
    public let displayName: String
    /// How a 0…1 fader position maps onto the value.
    public let taper: FaderTaper
    /// What applies the value: an engine slot or a session parameter. Nil only for
    /// descriptors made outside the model (tests, examples).
    public let binding: ParameterBinding?

    public init(address: String, kind: ParameterKind, defaultValue: ParameterValue, unit: String = "",
                access: ParameterAccess = .readWrite, summary: String, displayName: String? = nil,
                taper: FaderTaper? = nil, binding: ParameterBinding? = nil) {
        self.address = address
        self.kind = kind
        self.defaultValue = defaultValue
        self.unit = unit
        self.access = access
        self.summary = summary
        self.displayName = displayName ?? address
        self.taper = taper ?? FaderTaper(kind: kind, unit: unit)
        self.binding = binding
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
