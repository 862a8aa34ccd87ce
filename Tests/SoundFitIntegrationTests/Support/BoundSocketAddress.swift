import Glibc

/// The IPv4 address and port a socket is bound to (`getsockname`), for the test clients and
/// servers that bind to port 0 and then need the port they got.
enum BoundSocketAddress {
    /// What `descriptor` is bound to; all zeroes if `getsockname` fails.
    static func of(_ descriptor: Int32) -> sockaddr_in {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return address
    }
}
