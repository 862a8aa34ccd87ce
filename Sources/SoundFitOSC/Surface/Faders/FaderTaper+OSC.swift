import OSCCore
import SoundFitModel

/// The OSC form of fader positions: `<address>/normalized`.
///
/// - set: `/filter/cutoff/normalized ,f 0.5` (float, double, int 0/1 or T/F accepted), with
///   the same optional trailing int request id as a native set;
/// - query: `/filter/cutoff/normalized` with no argument; the reply is
///   `/filter/cutoff/normalized ,f <position>`;
/// - feedback to subscribers that asked for it uses the same form.
///
/// A normalized set is an ordinary change of the parameter: it is validated, delivered and
/// reported (`/state` names the parameter's own address and carries the native value) exactly
/// like a native set. Parameter addresses never end in `/normalized` (a registry test checks it).
extension FaderTaper {
    /// The suffix that turns a parameter address into its fader address.
    public static let addressSuffix = "/normalized"

    /// `/filter/cutoff/normalized` → `/filter/cutoff`; nil for an address not of that form.
    public static func parameterAddress(forNormalized address: String) -> String? {
        guard address.hasSuffix(addressSuffix), address.count > addressSuffix.count + 1 else { return nil }
        return String(address.dropLast(addressSuffix.count))
    }

    /// The fader position of `value` for a parameter.
    public static func normalized(_ value: ParameterValue, for descriptor: ParameterDescriptor) -> Float {
        FaderTaper(descriptor).normalized(value)
    }

    /// The native value at a fader position for a parameter; errors name the `/normalized` address.
    public static func value(normalized position: Float,
                             for descriptor: ParameterDescriptor) throws(ParameterError) -> ParameterValue {
        try FaderTaper(descriptor).value(normalized: position, address: descriptor.normalizedAddress)
    }

    /// Decodes the argument of a normalized set into a native value: coerces it to a position
    /// (float, double, int or T/F; anything else is a type error), then maps it. The result has
    /// the parameter's kind and lies in its range; read-only access is the caller's check.
    public static func value(from argument: OSCArgument,
                             for descriptor: ParameterDescriptor) throws(ParameterError) -> ParameterValue {
        try FaderTaper(descriptor).value(normalized: position(from: argument, for: descriptor),
                                         address: descriptor.normalizedAddress)
    }

    /// The fader position an argument of a normalized set asks for (float, double, int or T/F;
    /// anything else is a type error), not yet checked against 0…1 except a double's.
    public static func position(from argument: OSCArgument,
                                for descriptor: ParameterDescriptor) throws(ParameterError) -> Float {
        let address = descriptor.normalizedAddress
        switch argument {
        case .float(let v): return v
        case .double(let v):
            // Checked as received: a double just outside 0…1 never rounds into it.
            guard v.isNaN || v.isInfinite || (0...1).contains(v) else {
                throw .outOfRange(address: address, value: "\(v)", range: "0…1")
            }
            return Float(v)
        case .int32(let v): return Float(v)
        case .int64(let v): return Float(v)
        case .bool(let on): return on ? 1 : 0
        default: throw .wrongType(address: address, expected: "float 0…1")
        }
    }

    /// Two positions closer than this are the same place on a fader: what float rounding leaves
    /// of a continuous taper's round trip (position → value → position).
    public static let positionTolerance: Float = 1e-4

    /// The message that moves a fader to where `value` puts it, when that is not where the
    /// client left it, `position`: a choice, integer or toggle snaps to its nearest step
    /// (`/filter/type/normalized 0.3` → bandpass at 0.2857). Nil when the fader is there already.
    public static func snapped(from position: Float, to value: ParameterValue,
                               for descriptor: ParameterDescriptor) -> OSCMessage? {
        let actual = normalized(value, for: descriptor)
        return abs(actual - position) > positionTolerance ? message(value, for: descriptor) : nil
    }

    /// `<address>/normalized ,f <position>`: the reply to a normalized query and the normalized
    /// feedback message.
    public static func message(_ value: ParameterValue, for descriptor: ParameterDescriptor) -> OSCMessage {
        OSCMessage(descriptor.normalizedAddress, [.float(normalized(value, for: descriptor))])
    }
}

extension ParameterDescriptor {
    /// The fader form of this parameter's address: `<address>/normalized`.
    public var normalizedAddress: String { address + FaderTaper.addressSuffix }
}
