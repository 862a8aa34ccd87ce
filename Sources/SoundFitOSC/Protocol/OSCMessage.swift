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

/// A decoded UDP packet: a message, or a bundle of packets (their timetag is ignored:
/// SoundFit applies a bundle on arrival, all of its changes in one audio cycle).
public enum OSCPacket: Sendable, Equatable {
    case message(OSCMessage)
    case bundle([OSCPacket])

    /// Every message in the packet, bundles flattened, in order.
    public var messages: [OSCMessage] {
        switch self {
        case .message(let message): [message]
        case .bundle(let elements): elements.flatMap(\.messages)
        }
    }
}
