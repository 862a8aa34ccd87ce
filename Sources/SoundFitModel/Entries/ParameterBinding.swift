/// What applies a parameter's value: a slot of the audio engine, or one of the processing
/// session's parameters. Surfaces never look at addresses to tell the two apart; they ask the
/// binding.
public enum ParameterBinding: Sendable, Hashable {
    /// A kernel parameter, written to this engine slot and acknowledged by the audio thread.
    case engine(EngineSlot)
    /// A parameter of the processing session (exists only while a session is active).
    case session(SessionParameter.Name)

    /// The engine slot, for a kernel parameter.
    public var engineSlot: EngineSlot? {
        if case .engine(let slot) = self { return slot }
        return nil
    }

    /// The session parameter, for a session-bound one.
    public var sessionParameter: SessionParameter.Name? {
        if case .session(let parameter) = self { return parameter }
        return nil
    }

    /// Whether the value belongs to the processing session.
    public var isSession: Bool { sessionParameter != nil }
}

/// The audio engine's parameter slots: one lock-free mailbox word each, read by the audio thread
/// into the chain settings. The engine knows slots only; which parameter entry a slot carries is
/// the model's business (`ParameterModel.entry(for:)`).
///
/// The raw value is the slot index. Values travel to the audio thread as 32 bits
/// (`encode`/`decode`): a Float's bit pattern, 0/1 for booleans, the case index for choices.
public enum EngineSlot: Int, CaseIterable, Sendable {
    case filterEnabled
    case filterType
    case filterCutoff
    case filterQ
    case filterGain
    case ringModulatorEnabled
    case ringModulatorFrequency
    case ringModulatorMix
    case outputEnabled
    case outputGain
    /// The personalization stage's enable, written by the processing session's handler (it
    /// carries the session's `enabled` parameter).
    case personalizationEnabled
    /// The personalization stage's intensity, written by the processing session's handler.
    case personalizationIntensity

    /// The entry whose values this slot carries.
    public var descriptor: ParameterDescriptor { ParameterModel.entry(for: self) }

    /// The slot of the kernel parameter at `address` (nil for session parameters and unknown
    /// addresses).
    public init?(address: String) {
        guard let slot = ParameterModel.entry(at: address)?.binding?.engineSlot else { return nil }
        self = slot
    }

    /// 32-bit form of a validated value for the mailbox. Control thread.
    public func encode(_ value: ParameterValue) -> UInt32 {
        switch value {
        case .bool(let on): return on ? 1 : 0
        case .float(let v): return v.bitPattern
        case .int(let v): return UInt32(truncatingIfNeeded: v)
        case .choice(let name):
            if case .choice(let names) = descriptor.kind, let index = names.firstIndex(of: name) {
                return UInt32(index)
            }
            return 0
        }
    }

    /// The value a 32-bit mailbox word stands for. Control thread.
    public func decode(_ bits: UInt32) -> ParameterValue {
        switch descriptor.kind {
        case .bool: return .bool(bits != 0)
        case .float: return .float(Float(bitPattern: bits))
        case .int: return .int(Int(Int32(bitPattern: bits)))
        case .choice(let names): return .choice(names[min(Int(bits), names.count - 1)])
        }
    }
}
