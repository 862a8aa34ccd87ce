import Foundation
import Glibc

/// One HTTP/1.1 GET over a plain TCP socket to 127.0.0.1 (or another address of this host,
/// `host` in host byte order; `Connection: close`, read to EOF): the status code and the body.
/// For checking SoundFit's HTTP answers without a client library.
enum PlainHTTP {
    /// `makeSocket` gives the unconnected TCP socket to use (the request owns it): another
    /// network namespace's socket connects from there (see `NetJackBoxes.socket`).
    static func get(port: UInt16, host: UInt32 = 0x7F00_0001, _ target: String,
                    makeSocket: () throws -> Int32 = { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) })
        throws -> (status: Int, body: [UInt8])
    {
        let name = "\(host >> 24).\(host >> 16 & 0xFF).\(host >> 8 & 0xFF).\(host & 0xFF)"
        let descriptor = try makeSocket()
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(descriptor) }
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = connectTCP(descriptor, host: host, port: port)
        guard connected else { throw IntegrationError("connect to \(name):\(port): \(String(cString: strerror(errno)))") }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: \(name):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw IntegrationError("send to \(name):\(port) failed")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<($0 + 4)]) == separator }),
              let statusLine = String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n").first,
              let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw IntegrationError("no HTTP response from \(name):\(port)\(target): \(response.count) bytes") }
        return (status, Array(response[(end + 4)...]))
    }

    /// GET `target` and parse the body as a JSON object.
    static func getJSON(port: UInt16, host: UInt32 = 0x7F00_0001, _ target: String,
                        makeSocket: () throws -> Int32 = { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) })
        throws -> (status: Int, object: [String: Any])
    {
        let (status, body) = try get(port: port, host: host, target, makeSocket: makeSocket)
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw IntegrationError("\(target): the body is no JSON object: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        return (status, object)
    }
}

/// Connects the TCP socket `descriptor` to `host`:`port` (`host` in host byte order); false
/// (with `errno` set) when it fails.
func connectTCP(_ descriptor: Int32, host: UInt32, port: UInt16) -> Bool {
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = port.bigEndian
    remote.sin_addr.s_addr = host.bigEndian
    return withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
