import Foundation
import Glibc

/// The server side of the NSM protocol (new-session-manager API 1.2) as the test needs it,
/// written from the protocol, not from SoundFit: a UDP socket on 127.0.0.1 whose URL goes into
/// `NSM_URL`; it records every message a client sends with its source, and sends the server's
/// messages (`/reply` to the announce, `/nsm/client/open`, `/nsm/client/save`) to that source.
final class TestNSMServer: OSCTestReceiving, @unchecked Sendable {
    private let fd: Int32
    let port: UInt16
    /// Received but not yet consumed by `waitFor`.
    var pending: [OSCTestMessage] = []
    /// The client's address, from its first datagram (the announce).
    private(set) var client: sockaddr_in?

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw IntegrationError("bind: \(String(cString: strerror(errno)))")
        }
        fd = descriptor
        port = UInt16(bigEndian: BoundSocketAddress.of(descriptor).sin_port)
    }

    deinit { Glibc.close(fd) }

    /// What `nsmd` puts into `NSM_URL`.
    var url: String { "osc.udp://127.0.0.1:\(port)/" }

    /// Sends a message to the client (the source of the announce).
    func send(_ address: String, _ arguments: OSCValue...) throws {
        guard var destination = client else { throw IntegrationError("no client announced itself yet") }
        let bytes = OSCWire.encode(OSCTestMessage(address, arguments))
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Reads what arrives within `timeout`, noting the client from its first datagram
    /// (returns early once `stopEarly` holds).
    func receive(for timeout: Duration, stopEarly: () -> Bool) {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !stopEarly() {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            guard poll(&descriptor, 1, Int32(clamping: max(1, milliseconds))) > 0 else { continue }
            var source = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length) }
                }
            }
            guard count > 0 else { continue }
            if client == nil { client = source }
            pending += OSCWire.decode(Array(buffer[0..<count])) ?? [OSCTestMessage("/undecodable")]
        }
    }

    /// Everything SoundFit sent before its answer to a probe sent now: a malformed
    /// `/nsm/client/open`, answered with `/error` by the client's message loop, which handles
    /// the server's messages one at a time in arrival order. What the messages sent before the
    /// probe made SoundFit answer is then in hand, with no listening window.
    func receivedBeforeProbe(timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        try send("/nsm/client/open")
        return try waitFor("the answer to the probe", timeout: timeout) {
            $0.address == "/error" && $0.string(0) == "/nsm/client/open" && $0.string(2)?.contains("takes ,sss") == true
        }.before
    }

    /// Consumes messages up to and including the first matching `predicate`; returns it and
    /// the ones before it.
    func waitFor(_ description: String, timeout: Duration = .seconds(15),
                 where predicate: (OSCTestMessage) -> Bool) throws -> (match: OSCTestMessage, before: [OSCTestMessage]) {
        guard let found = takeFirst(timeout: timeout, where: predicate) else {
            throw IntegrationError("no \(description) within \(timeout); received: \(pending.map(\.description))")
        }
        return found
    }
}
