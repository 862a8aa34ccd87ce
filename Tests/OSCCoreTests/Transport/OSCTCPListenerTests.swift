import Foundation
import Glibc
import Logging
@testable import OSCCore
import Synchronization
import Testing

/// The TCP listener on real loopback sockets, with small limits: what a client sees when it is
/// idle, when it does not read, and when the listener is full.
@Suite struct OSCTCPListenerTests {
    /// A raw TCP connection to the listener.
    final class Connection {
        let fd: Int32
        let localPort: UInt16

        init(port: UInt16, receiveBufferBytes: Int32? = nil) throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if var bytes = receiveBufferBytes {
                setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = OSCPeer(host: "127.0.0.1", port: port)!.socketAddress
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(descriptor)
                throw OSCSocket.OpenError(description: "connect: \(String(cString: strerror(errno)))")
            }
            var local = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            fd = descriptor
            localPort = UInt16(bigEndian: local.sin_port)
        }

        deinit { close(fd) }

        var peer: OSCPeer { OSCPeer(host: "127.0.0.1", port: localPort)! }

        func write(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Reads until the listener closes the connection (true) or `timeout` passes (false).
        func waitForClose(timeout: Duration) -> (closed: Bool, bytes: Int) {
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 65536)
            var total = 0
            while ContinuousClock.now < deadline {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) > 0 else { continue }
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { return (true, total) }
                total += count
            }
            return (false, total)
        }
    }

    /// A listener on a free loopback port whose packets and disconnections are recorded.
    final class Harness: Sendable {
        let listener: OSCTCPListener
        let packets = Mutex<[(OSCPeer, [UInt8])]>([])
        let disconnected = Mutex<[OSCPeer]>([])

        init(_ limits: OSCTCPListener.Limits) throws {
            var logger = Logger(label: "soundfit.tcp.tests")
            logger.logLevel = .critical
            listener = try OSCTCPListener(host: "127.0.0.1", port: 0, limits: limits, logger: logger)
            listener.startReceiving(
                maximumPacketBytes: 1024,
                onPacket: { [self] bytes, peer in packets.withLock { $0.append((peer, bytes)) } },
                onOversized: { _, _ in },
                onDisconnected: { [self] peer in disconnected.withLock { $0.append(peer) } })
        }

        func waitFor(_ condition: () -> Bool, timeout: Duration = .seconds(10)) -> Bool {
            let deadline = ContinuousClock.now + timeout
            while !condition() {
                guard ContinuousClock.now < deadline else { return false }
                Thread.sleep(forTimeInterval: 0.005)
            }
            return true
        }
    }

    @Test func aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() throws {
        var limits = OSCTCPListener.Limits()
        limits.idleTimeout = .milliseconds(300)
        let harness = try Harness(limits)
        defer { harness.listener.close() }
        let connection = try Connection(port: harness.listener.boundPeer.port)
        let start = ContinuousClock.now
        connection.write(OSCStreamFraming.slip.frame(Array("/ping\0\0\0".utf8)))
        #expect(harness.waitFor { harness.packets.withLock { $0.count } == 1 })
        #expect(harness.listener.connectionCount == 1)
        let (closed, _) = connection.waitForClose(timeout: .seconds(5))
        let elapsed = ContinuousClock.now - start
        #expect(closed)
        #expect(elapsed >= .milliseconds(300), "closed after \(elapsed)")
        #expect(harness.waitFor { harness.disconnected.withLock { $0 } == [connection.peer] })
        #expect(harness.listener.connectionCount == 0)
        #expect(!harness.listener.send([1, 2, 3, 4], to: connection.peer), "nothing is sent to a closed connection")
    }

    @Test func aClientThatDoesNotReadIsClosedWhenItsQueueOverflowsAndSendsNeverWait() throws {
        var limits = OSCTCPListener.Limits()
        limits.maximumQueuedBytes = 64 * 1024
        limits.sendBufferBytes = 16 * 1024
        let harness = try Harness(limits)
        defer { harness.listener.close() }
        let slow = try Connection(port: harness.listener.boundPeer.port, receiveBufferBytes: 4096)
        let other = try Connection(port: harness.listener.boundPeer.port)
        slow.write(OSCStreamFraming.slip.frame([0x2F, 0x61, 0, 0]))
        other.write(OSCStreamFraming.slip.frame([0x2F, 0x62, 0, 0]))
        #expect(harness.waitFor { harness.packets.withLock { $0.count } == 2 })

        let packet = [UInt8](repeating: 0x41, count: 1000)
        var accepted = 0
        let start = ContinuousClock.now
        while harness.listener.send(packet, to: slow.peer) { accepted += 1 }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(1), "sends waited: \(elapsed)")
        #expect(accepted >= 64 && accepted < 1000, "\(accepted) packets accepted before the queue overflowed")
        #expect(harness.listener.send(packet, to: other.peer), "the other client is still served")
        #expect(harness.waitFor { harness.disconnected.withLock { $0 } == [slow.peer] })
        #expect(slow.waitForClose(timeout: .seconds(5)).closed)
        #expect(harness.listener.connectionCount == 1)
    }

    @Test func connectionsBeyondTheLimitAreClosedAtOnce() throws {
        var limits = OSCTCPListener.Limits()
        limits.maximumConnections = 2
        let harness = try Harness(limits)
        defer { harness.listener.close() }
        let port = harness.listener.boundPeer.port
        let first = try Connection(port: port), second = try Connection(port: port)
        #expect(harness.waitFor { harness.listener.connectionCount == 2 })
        let third = try Connection(port: port)
        #expect(third.waitForClose(timeout: .seconds(5)).closed)
        #expect(harness.listener.connectionCount == 2)
        _ = (first, second)
    }

    @Test func aConnectionFromOutsideTheAllowListIsClosedWhenAccepted() throws {
        var logger = Logger(label: "soundfit.tcp.tests")
        logger.logLevel = .critical
        let listener = try OSCTCPListener(host: "127.0.0.1", port: 0, allowList: try OSCAllowList(parsing: "127.0.0.2"),
                                          logger: logger)
        defer { listener.close() }
        final class Count: Sendable { let value = Mutex(0) }
        let received = Count()
        listener.startReceiving(maximumPacketBytes: 1024, onPacket: { _, _ in received.value.withLock { $0 += 1 } },
                                onOversized: { _, _ in })
        let connection = try Connection(port: listener.boundPeer.port)
        connection.write(OSCStreamFraming.slip.frame(Array("/ping\0\0\0".utf8)))
        #expect(connection.waitForClose(timeout: .seconds(5)).closed)
        #expect(received.value.withLock { $0 } == 0)
    }
}
