import Foundation
import Glibc
import OSCCore
import Synchronization
import Testing

/// The UDP transport on a real loopback socket.
@Suite struct OSCSocketTests {
    /// Ports nobody listens on: bound, read, then closed.
    private static func closedPorts(_ count: Int) throws -> [UInt16] {
        try (0..<count).map { _ in
            let probe = try OSCSocket(host: "127.0.0.1", port: 0)
            defer { probe.close(receiving: false) }
            return probe.boundPeer.port
        }
    }

    @Test("Datagrams to 32 closed ports, sent back to back, are all reported unreachable")
    func everyUnreachableDestinationIsReported() throws {
        let socket = try OSCSocket(host: "127.0.0.1", port: 0)
        defer { socket.close() }
        let reported = Mutex<Set<UInt16>>([])
        socket.reportUnreachable { peer in reported.withLock { _ = $0.insert(peer.port) } }
        socket.startReceiving(maximumPacketBytes: 1024, onPacket: { _, _ in }, onOversized: { _, _ in })
        let ports = try Self.closedPorts(32)
        // Each send can take the socket's pending error left by the ICMP answer to the one
        // before; the receive thread must still find every queued error.
        for port in ports {
            socket.send(OSCCodec.encode(OSCMessage("/ping")), to: OSCPeer(host: "127.0.0.1", port: port)!)
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while reported.withLock({ $0.count }) < ports.count, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(reported.withLock { $0 } == Set(ports))
    }

    @Test("An idle receive thread wakes for a datagram and for close()")
    func receivesAndCloses() throws {
        let socket = try OSCSocket(host: "127.0.0.1", port: 0)
        let received = Mutex<[String]>([])
        socket.startReceiving(maximumPacketBytes: 1024,
                              onPacket: { bytes, _ in received.withLock { $0.append(String(decoding: bytes.prefix(5), as: UTF8.self)) } },
                              onOversized: { _, _ in })
        Thread.sleep(forTimeInterval: 0.2)  // the thread is asleep in poll
        let client = try OSCSocket(host: "127.0.0.1", port: 0)
        defer { client.close(receiving: false) }
        client.send(OSCCodec.encode(OSCMessage("/ping")), to: socket.boundPeer)
        let deadline = ContinuousClock.now + .seconds(5)
        while received.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(received.withLock { $0 } == ["/ping"])
        let closing = ContinuousClock.now
        socket.close()
        #expect(ContinuousClock.now - closing < .seconds(2), "close() did not wake the receive thread")
    }
}
