import Foundation
import Glibc
import Synchronization

// Why not liblo: a lo_server reads no ICMP errors (IP_RECVERR), which say a subscriber is gone.
/// A bound UDP socket with a receive thread: SoundFit's datagram `OSCTransport`. Raw packets
/// go to `onPacket` on that thread; `send` may be called from any thread.
public final class OSCSocket: OSCTransport {
    /// Why the socket could not be opened.
    public struct OpenError: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    public let name = "udp"
    public let boundPeer: OSCPeer
    private let descriptor: Int32
    private let stopping = Atomic<Bool>(false)
    private let receiverDone = DispatchSemaphore(value: 0)
    private let unreachableHandler = Mutex<UnreachableHandler?>(nil)

    /// Binds to `host:port` (port 0 picks a free one). The receive buffer is raised so bursts
    /// from fader surfaces are not lost in the kernel.
    public init(host: String, port: UInt16, receiveBufferBytes: Int32 = 4 << 20) throws(OpenError) {
        guard let peer = OSCPeer(host: host, port: port) else {
            throw OpenError(description: "invalid OSC host '\(host)' (expected an IPv4 address or localhost; IPv6, ::1 too, is not supported)")
        }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw OpenError(description: "cannot create UDP socket: \(String(cString: strerror(errno)))") }
        var bufferBytes = receiveBufferBytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        // No receive timeout: the receive thread sleeps in `poll` until a datagram or an ICMP
        // error comes, and `close()` wakes it with `shutdown` (idle, it costs nothing).
        // ICMP errors for datagrams sent from this socket (port unreachable: nobody listens
        // there) are queued on its error queue, with the destination they concern, instead of
        // being lost: a subscriber that went away is found at its next feedback.
        var receiveErrors: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), IP_RECVERR, &receiveErrors, socklen_t(MemoryLayout<Int32>.size))
        var address = peer.socketAddress
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw OpenError(description: "cannot listen for OSC on udp \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        descriptor = fd
        boundPeer = OSCPeer(actual)
    }

    /// Starts the receive thread. `onPacket` gets each datagram (up to `maximumPacketBytes`;
    /// larger ones are reported through `onOversized` and dropped).
    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void) {
        let fd = descriptor
        let thread = Thread { [self] in
            defer { receiverDone.signal() }
            // With MSG_TRUNC, recvfrom returns a datagram's real length even when it is longer
            // than the buffer, so an oversized datagram is detected and dropped, never handed on
            // truncated.
            var buffer = [UInt8](repeating: 0, count: max(maximumPacketBytes, 1))
            var packetsSinceErrorCheck = 0
            while !stopping.load(ordering: .acquiring) {
                // Sleeps until a datagram, a queued ICMP error or `close()`. POLLERR stays set
                // while the error queue holds anything, so an error is read even when a `send`
                // on another thread took the socket's pending error (and with it the wake-up a
                // blocked `recvfrom` would have had).
                var wait = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&wait, 1, -1)
                if stopping.load(ordering: .acquiring) { break }
                guard ready > 0 else { continue }  // a signal
                if wait.revents & Int16(POLLERR) != 0 {
                    readErrorQueue()
                    packetsSinceErrorCheck = 0
                }
                guard wait.revents & Int16(POLLIN) != 0 else { continue }
                var source = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let received = buffer.withUnsafeMutableBytes { raw in
                    withUnsafeMutablePointer(to: &source) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            recvfrom(fd, raw.baseAddress, raw.count, Int32(MSG_TRUNC) | Int32(MSG_DONTWAIT), $0, &length)
                        }
                    }
                }
                // `close()` shut the socket down: what `recvfrom` returned is not a datagram.
                if stopping.load(ordering: .acquiring) { break }
                // An empty datagram is a packet too (it is answered as undecodable). During a
                // flood the error queue is also read every 256 datagrams.
                packetsSinceErrorCheck += 1
                if packetsSinceErrorCheck >= 256 {
                    packetsSinceErrorCheck = 0
                    readErrorQueue()
                }
                guard received >= 0 else { continue }
                let peer = OSCPeer(source)
                if received > maximumPacketBytes {
                    onOversized(received, peer)
                    continue
                }
                onPacket(Array(buffer[0..<received]), peer)
            }
        }
        thread.name = "soundfit-osc-receive"
        thread.start()
    }

    public func reportUnreachable(to handler: @escaping @Sendable (OSCPeer) -> Void) {
        unreachableHandler.withLock { $0 = UnreachableHandler(report: handler) }
    }

    /// Reads every queued ICMP error (receive thread) and reports the destinations that were
    /// port unreachable. Each entry's address is the original datagram's destination; its
    /// control message (`IP_RECVERR`) starts with a `sock_extended_err` whose first field is
    /// the error number.
    private func readErrorQueue() {
        var control = [UInt8](repeating: 0, count: 256)
        var payload = [UInt8](repeating: 0, count: 64)
        while true {
            var destination = sockaddr_in()
            let (received, level, type, error): (Int, Int32, Int32, UInt32) = payload.withUnsafeMutableBytes { payloadBytes in
                control.withUnsafeMutableBytes { controlBytes in
                    withUnsafeMutablePointer(to: &destination) { name in
                        var vector = iovec(iov_base: payloadBytes.baseAddress, iov_len: payloadBytes.count)
                        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                            var header = msghdr()
                            header.msg_name = UnsafeMutableRawPointer(name)
                            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_in>.size)
                            header.msg_iov = vectorPointer
                            header.msg_iovlen = 1
                            header.msg_control = controlBytes.baseAddress
                            header.msg_controllen = controlBytes.count
                            let received = recvmsg(descriptor, &header, Int32(MSG_ERRQUEUE) | Int32(MSG_DONTWAIT))
                            // The first control message: struct cmsghdr { size_t len; int level; int type; } + data.
                            let headerSize = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
                            guard received >= 0, header.msg_controllen >= headerSize + 4 else {
                                return (received, Int32(-1), Int32(-1), UInt32(0))
                            }
                            let raw = UnsafeRawBufferPointer(controlBytes)
                            return (received,
                                    raw.loadUnaligned(fromByteOffset: MemoryLayout<Int>.size, as: Int32.self),
                                    raw.loadUnaligned(fromByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self),
                                    raw.loadUnaligned(fromByteOffset: headerSize, as: UInt32.self))
                        }
                    }
                }
            }
            guard received >= 0 else {
                // The queue is empty: clear the socket's pending error too, which the kernel
                // sets just after queueing, so POLLERR does not stay raised with nothing to read.
                var pending: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &pending, &size)
                return
            }
            guard level == Int32(IPPROTO_IP), type == IP_RECVERR, error == UInt32(ECONNREFUSED) else { continue }
            let peer = OSCPeer(destination)
            unreachableHandler.withLock { $0 }?.report(peer)
        }
    }

    /// Whether datagrams sent to `peer` would arrive at this socket itself: the bound address
    /// and port, or — when bound to every interface — this port at any local address.
    /// Replies and feedback are never sent there (a server answering itself never stops).
    public func isOwnEndpoint(_ peer: OSCPeer) -> Bool {
        guard peer.port == boundPeer.port else { return false }
        if peer.address == boundPeer.address { return true }
        guard boundPeer.address == INADDR_ANY.bigEndian else { return false }
        return peer.isLoopback || Self.localAddresses().contains(peer.address)
    }

    /// The IPv4 addresses of this host's interfaces (network byte order).
    private static func localAddresses() -> Set<UInt32> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var addresses: Set<UInt32> = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) {
                addresses.insert(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr })
            }
            entry = current.pointee.ifa_next
        }
        return addresses
    }

    /// Sends one datagram; false if the kernel refused it. An ICMP error queued for an earlier
    /// datagram (to any peer) can be reported by this call instead (`ECONNREFUSED`): then the
    /// datagram was not sent, and is sent again. The receive thread reading the error queue
    /// raises that pending error once per entry still queued, so a send may meet it several
    /// times in a row (32 dead subscribers lost 4 sends with a single retry).
    @discardableResult
    public func send(_ bytes: [UInt8], to peer: OSCPeer) -> Bool {
        for _ in 0..<Self.sendAttempts {
            if sendOnce(bytes, to: peer) { return true }
            guard errno == ECONNREFUSED else { return false }
        }
        return false
    }

    /// Attempts per datagram while earlier datagrams' ICMP errors are being reported (a bound:
    /// each attempt that fails this way clears one).
    private static let sendAttempts = 64

    private func sendOnce(_ bytes: [UInt8], to peer: OSCPeer) -> Bool {
        var address = peer.socketAddress
        let sent = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT), $0,
                           socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return sent == bytes.count
    }

    /// Stops the receive thread (if started) and closes the socket.
    public func close(receiving: Bool = true) {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Wakes the receive thread's `poll` (Linux answers ENOTCONN for an unconnected UDP
        // socket but still marks it shut and wakes its readers).
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        if receiving { receiverDone.wait() }
        Glibc.close(descriptor)
    }
}
