import Foundation
import Glibc

/// One TCP connection to SoundFit's HTTP port, bytes as they are: for requests and WebSocket
/// frames no client library would send (forged headers, unmasked frames, pipelining without
/// reading). Every read is bounded by a timeout.
final class RawHTTPConnection: @unchecked Sendable {
    private let fd: Int32
    /// Bytes received and not yet taken.
    private(set) var received: [UInt8] = []
    /// Whether the server closed the connection (EOF or reset).
    private(set) var closedByServer = false

    /// Connects to `host`:`port` (`host` in host byte order, 127.0.0.1 by default). A small
    /// `receiveBufferBytes` makes a client that does not read fill up quickly; with
    /// `sendTimeoutSeconds` a send into a full connection fails after that long instead of blocking.
    init(port: UInt16, host: UInt32 = 0x7F00_0001, receiveBufferBytes: Int32? = nil, sendTimeoutSeconds: Int? = nil) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        if var bytes = receiveBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sendTimeoutSeconds {
            var timeout = timeval(tv_sec: sendTimeoutSeconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        let connected = connectTCP(descriptor, host: host, port: port)
        guard connected else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw IntegrationError("connect to port \(port): \(reason)")
        }
        fd = descriptor
    }

    deinit { Glibc.close(fd) }

    /// `errno` of the last send that failed: `EAGAIN` when the send timeout passed (the peer
    /// takes nothing), `EPIPE` or `ECONNRESET` when the peer closed.
    private(set) var sendError: Int32 = 0

    /// Writes `bytes`; false once the connection refuses them (closed, reset, or full past the send timeout).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else {
                sendError = errno
                return false
            }
            offset += sent
        }
        return true
    }

    /// Whether the last failed send found the connection closed by the peer (not merely full).
    var sendFoundClosed: Bool { sendError == EPIPE || sendError == ECONNRESET }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what arrives within `timeout`, until `done` holds for everything received so far or
    /// the server closes. Returns whether `done` held.
    @discardableResult
    func receive(timeout: Duration = .seconds(15), until done: ([UInt8]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(received) {
            guard !closedByServer else { return false }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&poller, 1, max(1, milliseconds)) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
            } else {
                closedByServer = true
            }
        }
        return true
    }

    /// Waits until the server closes the connection (reading and keeping what comes first).
    func waitForClose(timeout: Duration) -> Bool {
        receive(timeout: timeout) { _ in false }
        return closedByServer
    }

    /// Removes and returns what was received so far.
    func take() -> [UInt8] {
        defer { received = [] }
        return received
    }

    // MARK: HTTP

    /// One whole response at the start of `bytes`: status, headers (lowercased names), body
    /// (by Content-Length); nil until it is all there.
    static func response(in bytes: [UInt8]) -> (status: Int, headers: [String: String], body: [UInt8], length: Int)? {
        let separator = Array("\r\n\r\n".utf8)
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator })
        else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = lines.first.flatMap({ Int($0.split(separator: " ").dropFirst().first ?? "") }) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard bytes.count >= end + 4 + length else { return nil }
        return (status, headers, Array(bytes[(end + 4)..<(end + 4 + length)]), end + 4 + length)
    }

    /// Reads one whole response (or nil when none came within `timeout`) and removes it.
    func readResponse(timeout: Duration = .seconds(15)) -> (status: Int, headers: [String: String], body: [UInt8])? {
        guard receive(timeout: timeout, until: { Self.response(in: $0) != nil }),
              let response = Self.response(in: received) else { return nil }
        received.removeFirst(response.length)
        return (response.status, response.headers, response.body)
    }

    /// A request: `method target`, `Host` (unless nil), then `headers`, then `body`.
    static func request(_ target: String, host: String?, headers: [(String, String)] = []) -> [UInt8] {
        request("GET", target, host: host, headers: headers)
    }

    static func request(_ method: String, _ target: String, host: String?, headers: [(String, String)] = [],
                        body: [UInt8] = []) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\n"
        if let host { text += "Host: \(host)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }

    /// The headers of a WebSocket handshake (a fixed key: the tests check the status, not the accept hash).
    static let upgradeHeaders = [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                 ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")]

    // MARK: WebSocket frames

    /// A client frame: FIN, `rsv` bits (0…7), `opcode`, masked with `mask` (nil: unmasked).
    static func frame(opcode: UInt8, payload: [UInt8], mask: [UInt8]? = [0x12, 0x34, 0x56, 0x78], rsv: UInt8 = 0,
                      fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 7) << 4 | opcode & 0x0F]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else {
            bytes.append(maskBit | 126)
            bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        guard let mask else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// One server frame at the start of `bytes` (servers do not mask): opcode, payload, length.
    static func serverFrame(in bytes: [UInt8]) -> (opcode: UInt8, payload: [UInt8], length: Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F), offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard bytes.count >= offset + length else { return nil }
        return (bytes[0] & 0x0F, Array(bytes[offset..<(offset + length)]), offset + length)
    }

    /// Reads server frames until one with `opcode` arrives (within `timeout`); returns the frames read.
    func readFrames(until opcode: UInt8, timeout: Duration = .seconds(10)) -> [(opcode: UInt8, payload: [UInt8])] {
        var frames: [(opcode: UInt8, payload: [UInt8])] = []
        receive(timeout: timeout) { bytes in
            var rest = bytes[...]
            frames = []
            while let frame = Self.serverFrame(in: Array(rest)) {
                frames.append((frame.opcode, frame.payload))
                rest = rest.dropFirst(frame.length)
            }
            return frames.contains { $0.opcode == opcode }
        }
        return frames
    }
}
