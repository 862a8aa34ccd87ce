import Glibc

/// A UDP endpoint (IPv4), the sender of a request or the target of a reply.
public struct OSCPeer: Hashable, Sendable, CustomStringConvertible {
    /// Address in network byte order.
    public var address: UInt32
    /// Port in host byte order.
    public var port: UInt16

    public init(address: UInt32, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// Parses a dotted IPv4 address (or "localhost").
    public init?(host: String, port: UInt16) {
        var parsed = in_addr()
        let name = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, name, &parsed) == 1 else { return nil }
        self.init(address: parsed.s_addr, port: port)
    }

    init(_ storage: sockaddr_in) {
        address = storage.sin_addr.s_addr
        port = UInt16(bigEndian: storage.sin_port)
    }

    var socketAddress: sockaddr_in {
        var storage = sockaddr_in()
        storage.sin_family = sa_family_t(AF_INET)
        storage.sin_port = port.bigEndian
        storage.sin_addr.s_addr = address
        return storage
    }

    /// The address in host byte order, for range checks.
    public var hostOrderAddress: UInt32 { UInt32(bigEndian: address) }

    /// Whether the address is in 127.0.0.0/8: this host, unreachable from the network.
    public var isLoopback: Bool { hostOrderAddress >> 24 == 127 }

    public var host: String {
        var addr = in_addr(s_addr: address)
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { "\(host):\(port)" }
}
