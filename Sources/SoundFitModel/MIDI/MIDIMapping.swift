/// One MIDI control change bound to a parameter: a CC number on a channel moves the parameter
/// at `address` through its fader taper (0 → the range's minimum, 127 → its maximum).
///
/// Channels are numbered 1…16 as musicians count them (the wire's 0…15 plus one); controller
/// numbers 0…127 as sent. One channel/controller pair drives at most one parameter; one
/// parameter may be driven by several pairs. A pure value: usable from any thread.
public struct MIDIMapping: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let address: String
    /// 1…16.
    public let channel: Int
    /// 0…127.
    public let controller: Int

    /// The channels a mapping can name (OSC and the state file count from 1).
    public static let channels = 1...16
    /// The controller numbers of a control change.
    public static let controllers = 0...127
    /// At most this many mappings are kept: a fader box has 8 to 32 controls, and `/midi/list`
    /// answers every mapping at once.
    public static let maximumCount = 64

    /// Checks the address against the parameter model (known and writable) and the channel and
    /// controller against their ranges; `address` names the request in the errors.
    public init(address: String, channel: Int, controller: Int, request: String = "/midi/map") throws(ParameterError) {
        guard let entry = ParameterModel.entry(at: address) else { throw .unknownAddress(address) }
        guard entry.access == .readWrite else { throw .readOnly(address: address) }
        guard Self.channels.contains(channel) else {
            throw .outOfRange(address: request, value: "channel \(channel)", range: "1…16")
        }
        guard Self.controllers.contains(controller) else {
            throw .outOfRange(address: request, value: "controller \(controller)", range: "0…127")
        }
        self.address = address
        self.channel = channel
        self.controller = controller
    }

    /// The parameter's position in `ParameterModel.all`: what the real-time table holds.
    public var parameterIndex: Int { ParameterModel.all.firstIndex { $0.address == address }! }

    /// The value a control change value (0…127) stands for: `value / 127` through the
    /// parameter's fader taper. A toggle is on from 64; a choice takes the nearest step.
    public static func value(of entry: ParameterDescriptor, controlValue: Int) -> ParameterValue {
        let position = Float(min(max(controlValue, 0), 127)) / 127
        // A position in 0…1 is always accepted by a taper.
        return (try? entry.taper.value(normalized: position, address: entry.address)) ?? entry.defaultValue
    }

    /// Ordered by channel, then controller.
    public static func < (lhs: MIDIMapping, rhs: MIDIMapping) -> Bool {
        (lhs.channel, lhs.controller, lhs.address) < (rhs.channel, rhs.controller, rhs.address)
    }

    public var description: String { "CC \(controller) on channel \(channel) → \(address)" }
}
