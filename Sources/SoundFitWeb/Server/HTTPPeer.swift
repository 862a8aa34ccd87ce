/// An HTTP client's address: the host and port a connection came from.
///
/// HTTP's own value, so that routes see no OSC type; the server makes it from the address the
/// allow list checked (`OSCPeer`, which the WebSocket's OSC side keeps using).
public struct HTTPPeer: Hashable, Sendable, CustomStringConvertible {
    /// The dotted IPv4 address (`192.168.1.20`).
    public var host: String
    /// The client's port.
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `192.168.1.20:53012`.
    public var description: String { "\(host):\(port)" }
}
