import Foundation
import Glibc
import Logging
import OSCCore
import SoundFitOSC
import Synchronization

/// SoundFit's side of the new-session-manager (NSM) protocol, API 1.2: its own UDP socket to
/// the server named by `NSM_URL`, the messages it sends (announce, replies, errors, dirty and
/// clean) and the messages it accepts.
///
/// A socket of its own, apart from SoundFit's OSC port: the server's replies (`/reply`,
/// `/error`) never reach the OSC surface as requests, and nothing SoundFit sends its OSC
/// clients reaches the session manager. Only datagrams from the server's address and port are
/// accepted (loopback addresses count as one host: a server bound to every interface answers a
/// loopback client from 127.0.0.1 whatever `NSM_URL` named); the rest are dropped and counted.
///
/// Thread rules: `send` from any thread; the stream of `messages()` is consumed by one task.
public final class NSMClient: Sendable {
    /// The environment variable an NSM server sets for the programs it starts.
    public static let environmentVariable = "NSM_URL"
    /// The API version announced: 1.2 (new-session-manager).
    public static let apiVersion: (major: Int32, minor: Int32) = (1, 2)
    /// What SoundFit implements of the protocol's optional parts: an `open` while running
    /// (another state directory and JACK client name, without restarting the process), dirty and
    /// clean reports, and — when it serves the web page — an optional GUI: the web surface,
    /// opened in the desktop's browser.
    public static func capabilities(optionalGUI: Bool) -> String {
        optionalGUI ? ":switch:dirty:optional-gui:" : ":switch:dirty:"
    }
    /// NSM messages are a few hundred bytes; bigger datagrams are dropped.
    public static let maximumMessageBytes = 4096
    /// Messages waiting for the session task at most; older ones are dropped.
    public static let queueLimit = 64

    /// NSM's error codes (`/error ,sis path code message`).
    public enum ErrorCode: Int32, Sendable {
        case general = -1
        case notNow = -8
        case badProject = -9
        case createFailed = -10
        /// The project is in use by another instance (nsmd's `ERR_SESSION_LOCKED`).
        case sessionLocked = -11
    }

    /// Why `NSM_URL` cannot be used.
    public struct URLError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The server's address, from `NSM_URL`.
    public let server: OSCPeer
    private let socket: OSCSocket
    private let receiver = Mutex(Receiver())

    /// Where messages from the server go: the stream of the last `messages()` call, or, while
    /// nobody reads one (between waiting for `open` and running), a bounded queue.
    private struct Receiver {
        var continuation: AsyncStream<OSCMessage>.Continuation?
        var waiting: [OSCMessage] = []
        var closed = false

        mutating func deliver(_ message: OSCMessage) {
            if let continuation, case .enqueued = continuation.yield(message) { return }
            continuation = nil
            if waiting.count == NSMClient.queueLimit { waiting.removeFirst() }
            waiting.append(message)
        }
    }

    /// Opens the socket (on loopback when the server is on this host) and starts receiving.
    public init(url: String, logger: Logger) throws {
        let server = try Self.resolve(url)
        self.server = server
        socket = try OSCSocket(host: server.isLoopback ? "127.0.0.1" : "0.0.0.0", port: 0)
        // A forger can send at any rate: at most 5 lines per reason every 10 s.
        let log = RateLimitedLog<String> { logger.warning("\($0)") }
        socket.startReceiving(maximumPacketBytes: Self.maximumMessageBytes, onPacket: { [weak self] bytes, peer in
            guard Self.isServer(peer, server) else {
                log.log("foreign", "NSM: ignored a datagram from \(peer), not from the session manager at \(server)")
                return
            }
            guard let packet = try? OSCCodec.decode(bytes) else {
                log.log("undecodable", "NSM: ignored an undecodable datagram from the session manager")
                return
            }
            self?.receiver.withLock { receiver in
                for message in packet.messages { receiver.deliver(message) }
            }
        }, onOversized: { size, peer in
            log.log("oversized", "NSM: ignored a \(size)-byte datagram from \(peer) (limit \(Self.maximumMessageBytes))")
        })
    }

    /// Whether `peer` is the server: its port, and its address or, for a loopback server, any
    /// loopback address.
    static func isServer(_ peer: OSCPeer, _ server: OSCPeer) -> Bool {
        peer.port == server.port && (peer.address == server.address || (peer.isLoopback && server.isLoopback))
    }

    /// Parses `osc.udp://host:port/`; a host name is resolved (IPv4) once, here, at start.
    static func resolve(_ url: String) throws -> OSCPeer {
        if let peer = try? OSCPeer(oscURL: url) { return peer }
        guard url.lowercased().hasPrefix("\(OSCPeer.urlScheme)://") else {
            throw URLError(description: "\(environmentVariable)='\(url)' is not an osc.udp://host:port/ URL")
        }
        var rest = url.dropFirst(OSCPeer.urlScheme.count + 3)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]), port > 0 else {
            throw URLError(description: "\(environmentVariable)='\(url)': expected osc.udp://host:port/ with a port 1…65535")
        }
        let host = String(rest[..<colon])
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result, let address = first.pointee.ai_addr else {
            throw URLError(description: "\(environmentVariable)='\(url)': cannot resolve the host '\(host)' to an IPv4 address")
        }
        defer { freeaddrinfo(result) }
        let inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
        return OSCPeer(address: inet, port: port)
    }

    /// Messages from the server from now on, in arrival order (the ones no stream took yet
    /// first; bounded by `queueLimit`). A new call ends the previous stream.
    public func messages() -> AsyncStream<OSCMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: OSCMessage.self,
                                                            bufferingPolicy: .bufferingNewest(Self.queueLimit))
        receiver.withLock { receiver in
            receiver.continuation?.finish()
            guard !receiver.closed else { return continuation.finish() }
            receiver.continuation = continuation
            for message in receiver.waiting { continuation.yield(message) }
            receiver.waiting = []
        }
        return stream
    }

    public func send(_ address: String, _ arguments: [OSCArgument] = []) {
        socket.send(OSCCodec.encode(OSCMessage(address, arguments)), to: server)
    }

    /// `/nsm/server/announce ,sssiii name capabilities executable api_major api_minor pid`.
    public func announce(name: String, executable: String, optionalGUI: Bool) {
        send("/nsm/server/announce", [.string(name), .string(Self.capabilities(optionalGUI: optionalGUI)), .string(executable),
                                      .int32(Self.apiVersion.major), .int32(Self.apiVersion.minor), .int32(getpid())])
    }

    /// `/reply ,ss path message`: the request at `path` succeeded.
    public func reply(to path: String, _ message: String) {
        send("/reply", [.string(path), .string(message)])
    }

    /// `/error ,sis path code message`: the request at `path` failed.
    public func error(to path: String, _ code: ErrorCode, _ message: String) {
        send("/error", [.string(path), .int32(code.rawValue), .string(message)])
    }

    /// Stops receiving and closes the socket; the stream of `messages()` ends.
    public func close() {
        socket.close()
        receiver.withLock { receiver in
            receiver.closed = true
            receiver.continuation?.finish()
            receiver.continuation = nil
        }
    }
}

/// `/nsm/client/open ,sss path display_name client_id`: where the session keeps this client's
/// state and the name it goes by.
public struct NSMOpen: Sendable, Equatable {
    public static let address = "/nsm/client/open"
    /// The state directory for this client (NSM's "project path"; SoundFit makes it a directory).
    public var path: String
    public var displayName: String
    /// The client id: SoundFit's JACK client name.
    public var clientID: String

    public init?(_ message: OSCMessage) {
        guard message.address == Self.address, message.arguments.count == 3,
              case .string(let path) = message.arguments[0], case .string(let displayName) = message.arguments[1],
              case .string(let clientID) = message.arguments[2] else { return nil }
        self.path = path
        self.displayName = displayName
        self.clientID = clientID
    }

    public init(path: String, displayName: String, clientID: String) {
        self.path = path
        self.displayName = displayName
        self.clientID = clientID
    }

    /// `path` as the state directory: absolute, without `.` or `..` components (repeated and
    /// trailing slashes are dropped). A relative path would land wherever SoundFit's working
    /// directory happens to be, and `..` can leave the session's tree: both are refused, not
    /// resolved, so the state always lives where the session manager can see it.
    public func stateDirectory() throws(NSMRefusal) -> URL {
        guard path.hasPrefix("/") else {
            throw NSMRefusal(.createFailed, "the path '\(path)' is relative: NSM paths are absolute")
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        if let dots = components.first(where: { $0 == "." || $0 == ".." }) {
            throw NSMRefusal(.createFailed, "the path '\(path)' has a '\(dots)' component: NSM paths are absolute and normalized")
        }
        guard !components.isEmpty else {
            throw NSMRefusal(.createFailed, "the path '\(path)' is the root directory, not a client's directory")
        }
        return URL(fileURLWithPath: "/" + components.joined(separator: "/"), isDirectory: true)
    }
}

/// Why an `/nsm/client/open` was refused: the code and message of the `/error` answer.
public struct NSMRefusal: Error, CustomStringConvertible, Sendable {
    public var code: NSMClient.ErrorCode
    public var description: String

    public init(_ code: NSMClient.ErrorCode, _ description: String) {
        self.code = code
        self.description = description
    }
}
