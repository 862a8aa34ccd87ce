/// One OSC argument, as decoded from the wire (liblo's type tags).
public enum OSCArgument: Sendable, Equatable {
    case int32(Int32)
    case int64(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case symbol(String)
    case bool(Bool)
    case nil_
    case impulse
    /// `b`: bytes of any length.
    case blob([UInt8])
    /// `t`: an NTP timestamp, seconds since 1900 in the high 32 bits, the fraction in the low 32
    /// (1 is "immediately").
    case timetag(UInt64)
    /// `c`: one 8-bit character (sent as a 32-bit word).
    case char(UInt8)
    /// `m`: a MIDI message: port id, status byte, two data bytes.
    case midi(port: UInt8, status: UInt8, data1: UInt8, data2: UInt8)
    /// `r`: a 32-bit RGBA colour.
    case rgba(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8)
    /// A type SoundFit cannot carry (an array, `[`), by its tag.
    case unsupported(Character)

    /// The OSC type tag.
    public var typeTag: Character {
        switch self {
        case .int32: "i"
        case .int64: "h"
        case .float: "f"
        case .double: "d"
        case .string: "s"
        case .symbol: "S"
        case .bool(let value): value ? "T" : "F"
        case .nil_: "N"
        case .impulse: "I"
        case .blob: "b"
        case .timetag: "t"
        case .char: "c"
        case .midi: "m"
        case .rgba: "r"
        case .unsupported(let tag): tag
        }
    }
}

/// An OSC message: an address and its arguments.
public struct OSCMessage: Sendable, Equatable, CustomStringConvertible {
    public var address: String
    public var arguments: [OSCArgument]

    public init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    public var typeTags: String { String(arguments.map(\.typeTag)) }

    public var description: String {
        arguments.isEmpty ? address : "\(address) ,\(typeTags) \(arguments.map { "\($0)" }.joined(separator: " "))"
    }
}

/// A decoded UDP packet: a message, or a bundle of packets with its timetag. All the changes of
/// a packet take effect in one audio cycle: at once, or, for a bundle with a future timetag, in
/// the cycle that contains that moment.
public enum OSCPacket: Sendable, Equatable {
    case message(OSCMessage)
    case bundle(OSCTimetag, [OSCPacket])

    /// Every message in the packet, bundles flattened, in order.
    public var messages: [OSCMessage] {
        switch self {
        case .message(let message): [message]
        case .bundle(_, let elements): elements.flatMap(\.messages)
        }
    }

    /// When the packet takes effect: its outermost bundle's timetag ("immediately" for a message).
    public var timetag: OSCTimetag {
        if case .bundle(let timetag, _) = self { return timetag }
        return .immediately
    }

    /// Why the packet's nested bundles do not fit its one moment, or nil when they do. A packet
    /// takes effect at one moment, its outermost timetag; an inner bundle must carry the same
    /// timetag or "immediately" (with its enclosing bundle). An earlier one breaks OSC 1.0 (an
    /// inner timetag must not precede its enclosing one's); a later one would split the packet
    /// over two moments, so it is refused too.
    public var nestedTimetagProblem: String? {
        guard case .bundle(let outer, let elements) = self else { return nil }
        return Self.nestedTimetagProblem(in: elements, enclosing: outer)
    }

    private static func nestedTimetagProblem(in elements: [OSCPacket], enclosing: OSCTimetag) -> String? {
        for element in elements {
            guard case .bundle(let inner, let nested) = element else { continue }
            if !inner.isImmediate && inner != enclosing {
                return "a nested bundle's timetag (\(inner)) differs from its enclosing bundle's (\(enclosing)): "
                    + "a packet takes effect at one moment; give inner bundles the same timetag or 1 (immediately)"
            }
            if let problem = nestedTimetagProblem(in: nested, enclosing: enclosing) { return problem }
        }
        return nil
    }
}
