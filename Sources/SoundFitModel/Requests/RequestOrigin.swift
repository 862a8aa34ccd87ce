/// Who asked for a change, so feedback can skip the requester: a surface fills it with its own
/// typed sender (an OSC peer, a WebSocket connection, a MIDI port) and reads it back with
/// `sender(as:)`; no surface parses another's identifiers.
public struct RequestOrigin: Hashable, Sendable, CustomStringConvertible {
    private let box: any SenderBox

    public init<Sender: Hashable & Sendable>(_ sender: Sender) {
        box = TypedSender(sender: sender)
    }

    /// The sender, when it is a `Sender` (the surface that made the request reads its own type).
    public func sender<Sender: Hashable & Sendable>(as type: Sender.Type) -> Sender? {
        (box as? TypedSender<Sender>)?.sender
    }

    public static func == (lhs: RequestOrigin, rhs: RequestOrigin) -> Bool {
        lhs.box.isEqual(to: rhs.box)
    }

    public func hash(into hasher: inout Hasher) {
        box.hash(into: &hasher)
    }

    public var description: String { box.description }
}

/// A sender of any type, compared and hashed as its own type.
private protocol SenderBox: Sendable, CustomStringConvertible {
    func isEqual(to other: any SenderBox) -> Bool
    func hash(into hasher: inout Hasher)
}

private struct TypedSender<Sender: Hashable & Sendable>: SenderBox {
    let sender: Sender

    func isEqual(to other: any SenderBox) -> Bool {
        (other as? TypedSender<Sender>)?.sender == sender
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(Sender.self))
        hasher.combine(sender)
    }

    var description: String { "\(sender)" }
}
