// Why not liblo: it frames streams only inside its own lo_server sockets and exports no SLIP or size-prefix codec.
/// How OSC packets are delimited on a stream (TCP), and the state machine that cuts a byte
/// stream into packets. Pure: no sockets, no clocks, no locks.
///
/// - `slip`: OSC 1.1. Each packet is SLIP-encoded (RFC 1055): END (0xC0) ends a packet, an END
///   or ESC (0xDB) inside it is sent as ESC ESC_END (0xDB 0xDC) or ESC ESC_ESC (0xDB 0xDD).
///   SoundFit sends an END before and after each packet (the "double-END" form OSC 1.1
///   recommends); empty packets between two ENDs are not packets.
/// - `lengthPrefixed`: OSC 1.0 streams, and what liblo 0.31's `osc.tcp://` sends (`oscsend
///   osc.tcp://…` here): each packet preceded by its size as a big-endian int32.
///
/// A connection's framing is decided by its first byte: 0x00 is the high byte of a size (no
/// packet SoundFit accepts has 16 MiB), so the stream is length-prefixed; anything else (END,
/// or `/` and `#` of a SLIP packet sent without a leading END) is SLIP. SoundFit answers in the
/// framing the client uses.
public enum OSCStreamFraming: String, Sendable {
    case slip
    case lengthPrefixed = "length-prefixed"

    static let end: UInt8 = 0xC0
    static let escape: UInt8 = 0xDB
    static let escapedEnd: UInt8 = 0xDC
    static let escapedEscape: UInt8 = 0xDD

    /// The framing of a stream whose first byte is `byte`.
    public init(firstByte byte: UInt8) {
        self = byte == 0 ? .lengthPrefixed : .slip
    }

    /// `packet` framed for the stream.
    public func frame(_ packet: [UInt8]) -> [UInt8] {
        switch self {
        case .lengthPrefixed:
            let size = UInt32(packet.count)
            return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + packet
        case .slip:
            var framed: [UInt8] = [Self.end]
            framed.reserveCapacity(packet.count + 2 + packet.count / 32)
            for byte in packet {
                switch byte {
                case Self.end: framed += [Self.escape, Self.escapedEnd]
                case Self.escape: framed += [Self.escape, Self.escapedEscape]
                default: framed.append(byte)
                }
            }
            framed.append(Self.end)
            return framed
        }
    }
}

/// Cuts a received byte stream into OSC packets. A packet larger than `maximumPacketBytes` is
/// never held in memory: its bytes are counted and discarded, and it is reported as
/// `oversized` once its end (SLIP) or its announced size (length-prefixed) is known; the
/// packets after it are read normally. Memory per stream: at most `maximumPacketBytes` + 4.
public struct OSCStreamDeframer: Sendable {
    /// One thing found in the stream.
    public enum Event: Sendable, Equatable {
        case packet([UInt8])
        /// A packet of `size` bytes (decoded size for SLIP, announced size for length-prefixed)
        /// was discarded.
        case oversized(Int)
    }

    public let maximumPacketBytes: Int
    /// Decided by the first byte received; nil until then.
    public private(set) var framing: OSCStreamFraming?
    private var packet: [UInt8] = []
    /// Bytes of the current packet, kept or not.
    private var packetBytes = 0
    /// SLIP: the previous byte was ESC.
    private var escaping = false
    /// Length-prefixed: the bytes of the size word read so far.
    private var sizeWord: [UInt8] = []
    /// Length-prefixed: bytes of the current packet still to come (nil: a size is being read).
    private var remaining: Int?

    public init(maximumPacketBytes: Int, framing: OSCStreamFraming? = nil) {
        precondition(maximumPacketBytes > 0)
        self.maximumPacketBytes = maximumPacketBytes
        self.framing = framing
    }

    /// Reads `bytes`, the next part of the stream; returns the packets (and discarded ones)
    /// they complete, in order.
    public mutating func read(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        guard let first = bytes.first else { return [] }
        let framing = self.framing ?? OSCStreamFraming(firstByte: first)
        self.framing = framing
        var events: [Event] = []
        switch framing {
        case .slip:
            for byte in bytes { readSLIP(byte, into: &events) }
        case .lengthPrefixed:
            var index = bytes.startIndex
            while index < bytes.endIndex { index = readLengthPrefixed(bytes, from: index, into: &events) }
        }
        return events
    }

    /// Convenience for arrays (tests).
    public mutating func read(_ bytes: [UInt8]) -> [Event] {
        bytes.withUnsafeBytes { read($0) }
    }

    private mutating func readSLIP(_ byte: UInt8, into events: inout [Event]) {
        if byte == OSCStreamFraming.end {
            if packetBytes > maximumPacketBytes {
                events.append(.oversized(packetBytes))
            } else if packetBytes > 0 {
                events.append(.packet(packet))
            }
            packet.removeAll(keepingCapacity: true)
            packetBytes = 0
            escaping = false
            return
        }
        var decoded = byte
        if escaping {
            escaping = false
            // RFC 1055: an ESC followed by anything else stands for that byte.
            if byte == OSCStreamFraming.escapedEnd {
                decoded = OSCStreamFraming.end
            } else if byte == OSCStreamFraming.escapedEscape {
                decoded = OSCStreamFraming.escape
            }
        } else if byte == OSCStreamFraming.escape {
            escaping = true
            return
        }
        packetBytes += 1
        if packetBytes <= maximumPacketBytes {
            packet.append(decoded)
        } else if !packet.isEmpty {
            packet.removeAll()
        }
    }

    /// Consumes bytes from `index` on; returns where it stopped.
    private mutating func readLengthPrefixed(_ bytes: UnsafeRawBufferPointer, from index: Int,
                                             into events: inout [Event]) -> Int {
        guard let remaining else {
            sizeWord.append(bytes[index])
            guard sizeWord.count == 4 else { return index + 1 }
            let size = Int(sizeWord.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            sizeWord.removeAll(keepingCapacity: true)
            packetBytes = size
            if size == 0 {
                // An empty packet is a packet: it is answered as undecodable, like an empty datagram.
                events.append(.packet([]))
            } else {
                if size > maximumPacketBytes { events.append(.oversized(size)) }
                self.remaining = size
            }
            return index + 1
        }
        let count = min(remaining, bytes.endIndex - index)
        if packetBytes <= maximumPacketBytes {
            packet += UnsafeRawBufferPointer(rebasing: bytes[index..<index + count])
        }
        if count == remaining {
            if packetBytes <= maximumPacketBytes { events.append(.packet(packet)) }
            packet.removeAll(keepingCapacity: true)
            self.remaining = nil
        } else {
            self.remaining = remaining - count
        }
        return index + count
    }
}
