import Foundation
import Glibc
import Logging
import Synchronization

// Why not liblo: a lo_server caps no connections, idle time or queued replies, nor checks an allow-list.
/// OSC over TCP (OSC 1.1): a listening socket and its connections, served by one thread that
/// polls them all. Each connection is a peer; packets are SLIP-framed or length-prefixed, as
/// the client's first byte says (`OSCStreamFraming`), and replies go back over the connection
/// they answer, in the same framing.
///
/// Bounds (`Limits`): at most `maximumConnections` connections (one more is accepted and closed
/// at once, logged, rate limited); a connection that sends nothing for `idleTimeout` is closed;
/// packets over the surface's packet limit are discarded and reported (`onOversized`), the
/// stream goes on; replies a client does not read queue up to `maximumQueuedBytes` (beyond the
/// kernel's send buffer, `sendBufferBytes`), then the connection is closed, so a slow reader
/// never blocks the dispatcher or other clients: sends never wait. Connections from outside
/// the allow-list are closed when accepted.
///
/// Thread rules: `send`, `connectionCount` and `close` may be called from any thread except the
/// JACK process callback. Packets are handed to `onPacket` on the listener's own thread, one at
/// a time, in arrival order per connection; `onDisconnected` hears there when a connection is
/// gone.
public final class OSCTCPListener: OSCConnectionTransport {
    /// What one client may hold.
    public struct Limits: Sendable {
        /// Open connections at a time.
        public var maximumConnections = 64
        /// A connection that sends nothing for this long is closed (send `/ping` to keep one open).
        public var idleTimeout: Duration = .seconds(120)
        /// Framed replies waiting for a client that does not read, beyond the kernel's buffer.
        public var maximumQueuedBytes = 256 * 1024
        /// The kernel's send buffer of each connection (`SO_SNDBUF`; Linux doubles it).
        public var sendBufferBytes: Int32 = 64 * 1024

        public init() {}
    }

    public let name = "tcp"
    public let urlScheme = "osc.tcp"
    public let isConnectionOriented = true
    public let boundPeer: OSCPeer
    public let limits: Limits
    private let listener: Int32
    /// A pipe that wakes the poll thread when a reply is queued or the listener stops.
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let allowList: OSCAllowList
    private let logger: Logger
    private let refusals: RateLimitedLog<String>
    /// The sending side of every open connection, by peer; the poll thread adds and removes them.
    private let outputs = Mutex<[OSCPeer: Output]>([:])
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let pollerDone = DispatchSemaphore(value: 0)

    /// Listens on `host:port` (port 0 picks a free one). Throws when the address is taken.
    public init(host: String, port: UInt16, allowList: OSCAllowList = .everyone, limits: Limits = Limits(),
                logger: Logger) throws(OSCSocket.OpenError) {
        guard let peer = OSCPeer(host: host, port: port) else {
            throw OSCSocket.OpenError(description: "invalid OSC host '\(host)' (expected an IPv4 address or localhost; IPv6, ::1 too, is not supported)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OSCSocket.OpenError(description: "cannot create TCP socket: \(String(cString: strerror(errno)))") }
        // A restarted SoundFit binds again at once, although old connections linger in TIME_WAIT.
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = peer.socketAddress
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw OSCSocket.OpenError(description: "cannot listen for OSC on tcp \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            Glibc.close(fd)
            throw OSCSocket.OpenError(description: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        listener = fd
        wakeReader = pipeEnds[0]
        wakeWriter = pipeEnds[1]
        boundPeer = OSCPeer(actual)
        self.allowList = allowList
        self.limits = limits
        self.logger = logger
        refusals = RateLimitedLog { [logger] line in logger.warning("\(line)") }
    }

    /// Connections open now.
    public var connectionCount: Int { outputs.withLock { $0.count } }

    /// Packets over TCP come from the connection's peer, and replies go back over the
    /// connection: nothing SoundFit sends on it can arrive at SoundFit itself.
    public func isOwnEndpoint(_ peer: OSCPeer) -> Bool { false }


    public func startReceiving(maximumPacketBytes: Int,
                               onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
                               onOversized: @escaping @Sendable (Int, OSCPeer) -> Void,
                               onDisconnected: @escaping @Sendable (OSCPeer) -> Void) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            defer { pollerDone.signal() }
            var poller = Poller(listener: self, maximumPacketBytes: maximumPacketBytes, onPacket: onPacket,
                                onOversized: onOversized, onDisconnected: onDisconnected)
            poller.run()
        }
        thread.name = "soundfit-osc-tcp"
        thread.start()
    }

    /// Frames `packet` for the connection to `peer` and writes it without waiting; what the
    /// kernel does not take is queued for the poll thread. False if there is no such connection,
    /// or it is being closed (its queue overflowed or a write failed).
    @discardableResult
    public func send(_ packet: [UInt8], to peer: OSCPeer) -> Bool {
        let result = outputs.withLock { outputs in
            outputs[peer]?.write(packet, queueLimit: limits.maximumQueuedBytes) ?? .refused
        }
        switch result {
        case .sent: return true
        case .queued(let wake):
            if wake { wakePoller() }
            return true
        case .refused: return false
        case .failed:
            wakePoller()
            return false
        }
    }

    /// Stops the poll thread (if started), closes every connection and the listening socket.
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakePoller()
        if started.load(ordering: .acquiring) { pollerDone.wait() }
        let descriptors = outputs.withLock { outputs in
            defer { outputs.removeAll() }
            return outputs.values.map(\.descriptor)
        }
        for descriptor in descriptors { Glibc.close(descriptor) }
        Glibc.close(listener)
        Glibc.close(wakeReader)
        Glibc.close(wakeWriter)
    }

    private func wakePoller() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    // MARK: The sending side of a connection

    /// What a send did.
    private enum WriteResult {
        case sent
        /// Some bytes wait in the queue; `wake`: the queue was empty, the poll thread must
        /// start watching the socket for room.
        case queued(wake: Bool)
        /// No connection, or one being closed.
        case refused
        /// The write failed or the queue overflowed: the poll thread closes the connection.
        case failed
    }

    /// A connection's socket, its framing and the replies the kernel did not take yet.
    /// Guarded by `outputs`.
    private struct Output {
        let descriptor: Int32
        /// Replies use the client's framing; SLIP until its first byte says otherwise.
        var framing: OSCStreamFraming = .slip
        var queue: [UInt8] = []
        /// Bytes of `queue` already written.
        var written = 0
        /// Why the connection is to be closed, once it is.
        var failure: String?

        var queuedBytes: Int { queue.count - written }

        mutating func write(_ packet: [UInt8], queueLimit: Int) -> WriteResult {
            guard failure == nil else { return .refused }
            let framed = framing.frame(packet)
            let wasEmpty = queuedBytes == 0
            if wasEmpty {
                let sent = framed.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if sent == framed.count { return .sent }
                if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK {
                    failure = "write failed: \(String(cString: strerror(errno)))"
                    return .failed
                }
                queue = Array(framed[max(sent, 0)...])
                written = 0
            } else {
                queue += framed
            }
            if queuedBytes > queueLimit {
                failure = "it does not read its replies (\(queuedBytes) bytes queued, limit \(queueLimit))"
                queue = []
                written = 0
                return .failed
            }
            return .queued(wake: wasEmpty)
        }

        /// Writes what the kernel takes now. False when the connection failed.
        mutating func flush() -> Bool {
            while queuedBytes > 0 {
                let sent = queue.withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress! + written, queuedBytes, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if sent < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { break }
                    failure = "write failed: \(String(cString: strerror(errno)))"
                    return false
                }
                written += sent
            }
            if queuedBytes == 0 {
                queue.removeAll(keepingCapacity: queue.capacity <= 65536)
                written = 0
            } else if written > 65536 {
                queue.removeFirst(written)
                written = 0
            }
            return true
        }
    }

    // MARK: The poll thread

    /// The receiving side of every connection; lives on the poll thread only.
    private struct Poller {
        struct Reader {
            let peer: OSCPeer
            var deframer: OSCStreamDeframer
            var lastReceived: ContinuousClock.Instant
        }

        let listener: OSCTCPListener
        let maximumPacketBytes: Int
        let onPacket: @Sendable ([UInt8], OSCPeer) -> Void
        let onOversized: @Sendable (Int, OSCPeer) -> Void
        let onDisconnected: @Sendable (OSCPeer) -> Void
        var readers: [Int32: Reader] = [:]
        /// One read per ready connection and turn: a client that floods is served in turns of at
        /// most this many bytes, between the other connections' turns.
        var buffer = [UInt8](repeating: 0, count: 16384)

        init(listener: OSCTCPListener, maximumPacketBytes: Int,
             onPacket: @escaping @Sendable ([UInt8], OSCPeer) -> Void,
             onOversized: @escaping @Sendable (Int, OSCPeer) -> Void,
             onDisconnected: @escaping @Sendable (OSCPeer) -> Void) {
            self.listener = listener
            self.maximumPacketBytes = maximumPacketBytes
            self.onPacket = onPacket
            self.onOversized = onOversized
            self.onDisconnected = onDisconnected
        }

        mutating func run() {
            let clock = ContinuousClock()
            while !listener.stopping.load(ordering: .acquiring) {
                // Which connections wait for room to write, and which are to be closed.
                let (writing, failed) = listener.outputs.withLock { outputs in
                    (Set(outputs.values.filter { $0.queuedBytes > 0 }.map(\.descriptor)),
                     outputs.values.compactMap { output in output.failure.map { (output.descriptor, $0) } })
                }
                for (descriptor, reason) in failed { close(descriptor, reason: reason, level: .warning) }
                let now = clock.now
                for (descriptor, reader) in readers where now - reader.lastReceived >= listener.limits.idleTimeout {
                    close(descriptor, reason: "idle for \(listener.limits.idleTimeout)", level: .info)
                }

                var descriptors = [pollfd(fd: listener.wakeReader, events: Int16(POLLIN), revents: 0),
                                   pollfd(fd: listener.listener, events: Int16(POLLIN), revents: 0)]
                for descriptor in readers.keys {
                    let events = Int16(POLLIN) | (writing.contains(descriptor) ? Int16(POLLOUT) : 0)
                    descriptors.append(pollfd(fd: descriptor, events: events, revents: 0))
                }
                let nextIdle = readers.values.map { $0.lastReceived + listener.limits.idleTimeout }.min()
                let wait = min(nextIdle.map { max(.zero, $0 - clock.now) } ?? .seconds(1), .seconds(1))
                // With no connection nothing can time out: sleep until a connection or `stop()`
                // (the wake pipe), so an idle SoundFit's TCP thread does not wake every second.
                let milliseconds = readers.isEmpty
                    ? -1 : Int32(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000) + 1
                guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { continue }

                if descriptors[0].revents != 0 { drainWakeups() }
                if descriptors[1].revents & Int16(POLLIN) != 0 { acceptConnections() }
                for entry in descriptors.dropFirst(2) where entry.revents != 0 {
                    if entry.revents & Int16(POLLOUT) != 0 {
                        let flushed = listener.outputs.withLock { outputs -> Bool in
                            guard let peer = readers[entry.fd]?.peer else { return true }
                            return outputs[peer]?.flush() ?? true
                        }
                        if !flushed { continue }  // closed on the next turn, with its reason
                    }
                    if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(on: entry.fd) }
                }
            }
            for descriptor in Array(readers.keys) {
                if let peer = readers.removeValue(forKey: descriptor)?.peer { onDisconnected(peer) }
            }
        }

        private func drainWakeups() {
            var bytes = [UInt8](repeating: 0, count: 256)
            while read(listener.wakeReader, &bytes, bytes.count) > 0 {}
        }

        private mutating func acceptConnections() {
            while true {
                var address = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let descriptor = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        accept(listener.listener, $0, &length)
                    }
                }
                guard descriptor >= 0 else { return }
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                let peer = OSCPeer(address)
                guard listener.allowList.allows(peer) else {
                    Glibc.close(descriptor)
                    listener.refusals.log("refused \(peer.host)",
                                          "refused an OSC TCP connection from \(peer): not in --osc-allow \(listener.allowList)")
                    continue
                }
                guard readers.count < listener.limits.maximumConnections else {
                    Glibc.close(descriptor)
                    listener.refusals.log("tcp connections",
                                          "refused an OSC TCP connection from \(peer): \(listener.limits.maximumConnections) connections are open (the limit)")
                    continue
                }
                var sendBuffer = listener.limits.sendBufferBytes
                setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
                // Replies are small and answer a request: send each at once.
                var noDelay: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
                readers[descriptor] = Reader(peer: peer, deframer: OSCStreamDeframer(maximumPacketBytes: maximumPacketBytes),
                                             lastReceived: .now)
                listener.outputs.withLock { $0[peer] = Output(descriptor: descriptor) }
                listener.logger.debug("OSC TCP connection from \(peer)")
            }
        }

        /// Reads what one connection sent and hands on the packets it completes.
        private mutating func receive(on descriptor: Int32) {
            guard var reader = readers[descriptor] else { return }
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received == 0 {
                close(descriptor, reason: "closed by the client", level: .debug)
                return
            }
            if received < 0 {
                if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    close(descriptor, reason: "read failed: \(String(cString: strerror(errno)))", level: .info)
                }
                return
            }
            let decided = reader.deframer.framing != nil
            let events = buffer.withUnsafeBytes { reader.deframer.read(UnsafeRawBufferPointer(rebasing: $0[0..<received])) }
            reader.lastReceived = .now
            readers[descriptor] = reader
            if !decided, let framing = reader.deframer.framing {
                listener.outputs.withLock { $0[reader.peer]?.framing = framing }
            }
            for event in events {
                switch event {
                case .packet(let packet): onPacket(packet, reader.peer)
                case .oversized(let size): onOversized(size, reader.peer)
                }
            }
        }

        private mutating func close(_ descriptor: Int32, reason: String, level: Logger.Level) {
            guard let reader = readers.removeValue(forKey: descriptor) else { return }
            listener.outputs.withLock { _ = $0.removeValue(forKey: reader.peer) }
            Glibc.close(descriptor)
            let line = "closed the OSC TCP connection from \(reader.peer): \(reason)"
            // A client can make this happen again and again: warnings are rate limited.
            if level >= .warning {
                listener.refusals.log("dropped \(reader.peer.host)", line)
            } else {
                listener.logger.log(level: level, "\(line)")
            }
            onDisconnected(reader.peer)
        }
    }
}
