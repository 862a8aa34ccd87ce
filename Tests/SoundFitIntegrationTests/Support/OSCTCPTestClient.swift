import Foundation
import Glibc

/// Stream framings as this test client writes and reads them, independent of SoundFit's.
enum TestStreamFraming {
    /// OSC 1.1: RFC 1055 SLIP, an END (0xC0) before and after each packet.
    case slip
    /// OSC 1.0 / liblo 0.31: a big-endian int32 size before each packet.
    case lengthPrefixed

    func frame(_ packet: [UInt8]) -> [UInt8] {
        switch self {
        case .lengthPrefixed:
            return OSCWire.bigEndian(UInt32(packet.count)) + packet
        case .slip:
            var bytes: [UInt8] = [0xC0]
            for byte in packet {
                if byte == 0xC0 { bytes += [0xDB, 0xDC] } else if byte == 0xDB { bytes += [0xDB, 0xDD] } else { bytes.append(byte) }
            }
            return bytes + [0xC0]
        }
    }
}

/// A plain TCP connection talking OSC to one SoundFit instance: frames what it sends, splits
/// and decodes what it receives, and keeps every received packet's raw bytes.
final class OSCTCPTestClient: OSCTestReceiving, @unchecked Sendable {
    let framing: TestStreamFraming
    private let fd: Int32
    private var stream: [UInt8] = []
    /// Every packet received, raw, in order.
    private(set) var packets: [[UInt8]] = []
    var pending: [OSCTestMessage] = []
    /// The server closed the connection (EOF or reset).
    private(set) var closedByServer = false
    /// The local port of the connection.
    let localPort: UInt16

    /// Connects from `localAddress` (host byte order) and `localPort` (0: any) to
    /// 127.0.0.1:`port`. A small `receiveBufferBytes` makes a client that does not read fill up
    /// quickly. A TCP port is not a UDP port: `localPort` may be one a UDP socket owns.
    init(port: UInt16, framing: TestStreamFraming = .slip, localAddress: UInt32 = 0x7F00_0001,
         localPort requestedPort: UInt16 = 0, receiveBufferBytes: Int32? = nil) throws {
        self.framing = framing
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        if var bytes = receiveBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = localAddress.bigEndian
        local.sin_port = requestedPort.bigEndian
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &local) { localPointer in
            withUnsafePointer(to: &remote) { remotePointer in
                localPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { localAddress in
                    remotePointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { remoteAddress in
                        bind(descriptor, localAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                            && connect(descriptor, remoteAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
            }
        }
        guard connected else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw IntegrationError("connect to tcp 127.0.0.1:\(port): \(reason)")
        }
        localPort = UInt16(bigEndian: BoundSocketAddress.of(descriptor).sin_port)
        fd = descriptor
    }

    deinit { Glibc.close(fd) }

    /// `osc.tcp://127.0.0.1:port/` of this connection, as SoundFit names it.
    var url: String { "osc.tcp://127.0.0.1:\(localPort)/" }

    // MARK: Sending

    /// Writes `bytes` as they are (no framing); false if the connection refused them.
    @discardableResult
    func writeRaw(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Frames and writes one packet.
    @discardableResult
    func sendPacket(_ packet: [UInt8]) -> Bool { writeRaw(framing.frame(packet)) }

    @discardableResult
    func send(_ address: String, _ arguments: OSCValue...) -> Bool {
        sendPacket(OSCWire.encode(OSCTestMessage(address, arguments)))
    }

    // MARK: Receiving

    /// Reads what arrives within `timeout` (returns early once `stopEarly` holds).
    func receive(for timeout: Duration, stopEarly: () -> Bool) {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !closedByServer {
            let remaining = deadline - ContinuousClock.now
            let milliseconds = max(0, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(clamping: milliseconds)) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count <= 0 {
                    if count == 0 || (errno != EAGAIN && errno != EINTR) { closedByServer = true }
                    continue
                }
                stream += buffer[0..<count]
                for packet in takePackets() {
                    packets.append(packet)
                    pending += OSCWire.decode(packet) ?? [OSCTestMessage("/undecodable", [.blob(packet)])]
                }
                if stopEarly() { return }
                continue
            }
            if ContinuousClock.now >= deadline { return }
        }
    }

    /// Complete packets at the front of `stream`, removed from it.
    private func takePackets() -> [[UInt8]] {
        var packets: [[UInt8]] = []
        switch framing {
        case .lengthPrefixed:
            while stream.count >= 4 {
                let size = Int(stream[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                guard stream.count >= 4 + size else { break }
                packets.append(Array(stream[4..<4 + size]))
                stream.removeFirst(4 + size)
            }
        case .slip:
            while let end = stream.firstIndex(of: 0xC0) {
                var packet: [UInt8] = []
                var escaping = false
                for byte in stream[..<end] {
                    if escaping {
                        packet.append(byte == 0xDC ? 0xC0 : byte == 0xDD ? 0xDB : byte)
                        escaping = false
                    } else if byte == 0xDB {
                        escaping = true
                    } else {
                        packet.append(byte)
                    }
                }
                stream.removeFirst(end + 1)
                if !packet.isEmpty { packets.append(packet) }
            }
        }
        return packets
    }

    /// Consumes pending messages up to the first one matching `predicate`; returns it.
    func waitFor(_ description: String, timeout: Duration = .seconds(10),
                 where predicate: (OSCTestMessage) -> Bool) throws -> OSCTestMessage {
        try take(description, timeout: timeout, where: predicate).match
    }

    /// As `waitFor`, also returning the messages consumed before the match.
    private func take(_ description: String, timeout: Duration,
                      where predicate: (OSCTestMessage) -> Bool) throws -> (match: OSCTestMessage, before: [OSCTestMessage]) {
        guard let found = takeFirst(timeout: timeout, where: predicate) else {
            throw IntegrationError("no \(description) over TCP within \(timeout) (closed: \(closedByServer)); received: \(pending)")
        }
        return found
    }

    /// Reads until the server closes the connection or `timeout` passes; true if it closed.
    func waitForClose(timeout: Duration) -> Bool {
        drain(for: timeout)
        return closedByServer
    }

    /// `/ping` → `/pong`; returns the round trip.
    @discardableResult
    func ping(timeout: Duration = .seconds(5)) throws -> Duration {
        let start = ContinuousClock.now
        send("/ping")
        _ = try waitFor("/pong", timeout: timeout) { $0.address == "/pong" }
        return ContinuousClock.now - start
    }

    /// `/sync ,i id` → `/synced ,i id` over the connection: waits until every request sent
    /// before over it has ended. Returns the messages that arrived before `/synced` (consumed).
    @discardableResult
    func sync(_ id: Int32 = 1, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        send("/sync", .int(id))
        return try take("/synced \(id)", timeout: timeout) { $0.address == "/synced" && $0.arguments == [.int(id)] }.before
    }

    /// Sets a parameter and returns its `/state` reports up to the terminal one.
    func set(_ address: String, _ value: OSCValue, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        send(address, value)
        var reports: [OSCTestMessage] = []
        while true {
            let report = try waitFor("/state for \(address)", timeout: timeout) {
                ($0.address == "/state" && $0.string(0) == address) || $0.address == "/error"
            }
            reports.append(report)
            if report.address == "/error" || report.isTerminalState { return reports }
        }
    }
}
