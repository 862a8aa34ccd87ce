import Foundation
import Glibc

/// One OSC argument as this independent test codec sees it (OSC 1.0 type tags).
enum OSCValue: Equatable, CustomStringConvertible {
    case int(Int32)
    case float(Float)
    case string(String)
    case int64(Int64)
    case double(Double)
    case `true`
    case `false`
    case null
    case impulse
    case blob([UInt8])
    /// OSC 1.0 `t`: NTP seconds in the high 32 bits, fraction in the low 32.
    case timetag(UInt64)
    /// OSC 1.0 `c`: a character in a 32-bit word.
    case char(UInt8)
    /// OSC 1.0 `m`: port id, status, data1, data2.
    case midi(UInt8, UInt8, UInt8, UInt8)
    /// OSC 1.0 `r`: a 32-bit RGBA colour.
    case rgba(UInt32)

    var tag: UInt8 {
        switch self {
        case .int: UInt8(ascii: "i")
        case .float: UInt8(ascii: "f")
        case .string: UInt8(ascii: "s")
        case .int64: UInt8(ascii: "h")
        case .double: UInt8(ascii: "d")
        case .true: UInt8(ascii: "T")
        case .false: UInt8(ascii: "F")
        case .null: UInt8(ascii: "N")
        case .impulse: UInt8(ascii: "I")
        case .blob: UInt8(ascii: "b")
        case .timetag: UInt8(ascii: "t")
        case .char: UInt8(ascii: "c")
        case .midi: UInt8(ascii: "m")
        case .rgba: UInt8(ascii: "r")
        }
    }

    var description: String {
        switch self {
        case .int(let v): "i:\(v)"
        case .float(let v): "f:\(v)"
        case .string(let v): "s:\"\(v)\""
        case .int64(let v): "h:\(v)"
        case .double(let v): "d:\(v)"
        case .true: "T"
        case .false: "F"
        case .null: "N"
        case .impulse: "I"
        case .blob(let v): "b:\(v.count) bytes"
        case .timetag(let v): "t:\(v)"
        case .char(let v): "c:\(v)"
        case .midi(let a, let b, let c, let d): "m:\([a, b, c, d])"
        case .rgba(let v): "r:\(v)"
        }
    }

    var stringValue: String? { if case .string(let v) = self { v } else { nil } }

    /// Numeric value of an int, int64, float or double argument.
    var number: Double? {
        switch self {
        case .int(let v): Double(v)
        case .int64(let v): Double(v)
        case .float(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }
}

struct OSCTestMessage: Equatable, CustomStringConvertible {
    var address: String
    var arguments: [OSCValue]

    init(_ address: String, _ arguments: [OSCValue] = []) {
        self.address = address
        self.arguments = arguments
    }

    var description: String { ([address] + arguments.map(\.description)).joined(separator: " ") }

    func string(_ index: Int) -> String? { index < arguments.count ? arguments[index].stringValue : nil }
    func number(_ index: Int) -> Double? { index < arguments.count ? arguments[index].number : nil }
}

/// OSC 1.0 encoding and decoding written for the tests, independent of SoundFit's codec.
enum OSCWire {
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        var result = bytes + [0]
        while result.count % 4 != 0 { result.append(0) }
        return result
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// The NTP timetag of a wall-clock moment (seconds since 1970), computed here independently
    /// of SoundFit's codec.
    static func timetag(unixSeconds: Double) -> UInt64 {
        let ntp = unixSeconds + 2_208_988_800
        let whole = floor(ntp)
        return UInt64(whole) << 32 | UInt64((ntp - whole) * 4_294_967_296)
    }

    /// The wall clock now, seconds since 1970.
    static var wallClockNow: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func encode(_ message: OSCTestMessage) -> [UInt8] {
        var bytes = padded(Array(message.address.utf8))
        bytes += padded([UInt8(ascii: ",")] + message.arguments.map(\.tag))
        for argument in message.arguments {
            switch argument {
            case .int(let v): bytes += bigEndian(v)
            case .float(let v): bytes += bigEndian(v.bitPattern)
            case .string(let v): bytes += padded(Array(v.utf8))
            case .int64(let v): bytes += bigEndian(v)
            case .double(let v): bytes += bigEndian(v.bitPattern)
            case .blob(let v):
                bytes += bigEndian(Int32(v.count)) + v
                while bytes.count % 4 != 0 { bytes.append(0) }
            case .timetag(let v): bytes += bigEndian(v)
            case .char(let v): bytes += [0, 0, 0, v]
            case .midi(let a, let b, let c, let d): bytes += [a, b, c, d]
            case .rgba(let v): bytes += bigEndian(v)
            case .true, .false, .null, .impulse: break
            }
        }
        return bytes
    }

    /// `#bundle`, the timetag (1: "immediately"), then each element with its size.
    static func encodeBundle(_ messages: [OSCTestMessage], timetag: UInt64 = 1) -> [UInt8] {
        var bytes = padded(Array("#bundle".utf8)) + bigEndian(timetag)
        for message in messages {
            let element = encode(message)
            bytes += bigEndian(Int32(element.count)) + element
        }
        return bytes
    }

    /// Decodes a packet into its messages (bundles flattened); nil if malformed.
    static func decode(_ bytes: [UInt8]) -> [OSCTestMessage]? {
        var reader = Reader(bytes: bytes)
        if bytes.starts(with: padded(Array("#bundle".utf8))) {
            reader.offset = 16
            var messages: [OSCTestMessage] = []
            while reader.offset < bytes.count {
                guard let size = reader.int32(), size > 0, reader.offset + Int(size) <= bytes.count,
                      let inner = decode(Array(bytes[reader.offset..<reader.offset + Int(size)]))
                else { return nil }
                messages += inner
                reader.offset += Int(size)
            }
            return messages
        }
        guard let address = reader.string(), address.hasPrefix("/") else { return nil }
        guard reader.offset < bytes.count else { return [OSCTestMessage(address)] }
        guard let tags = reader.string(), tags.hasPrefix(",") else { return nil }
        var arguments: [OSCValue] = []
        for tag in tags.utf8.dropFirst() {
            switch tag {
            case UInt8(ascii: "i"): guard let v = reader.int32() else { return nil }; arguments.append(.int(v))
            case UInt8(ascii: "f"):
                guard let v = reader.int32() else { return nil }
                arguments.append(.float(Float(bitPattern: UInt32(bitPattern: v))))
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                guard let v = reader.string() else { return nil }; arguments.append(.string(v))
            case UInt8(ascii: "h"): guard let v = reader.int64() else { return nil }; arguments.append(.int64(v))
            case UInt8(ascii: "d"):
                guard let v = reader.int64() else { return nil }
                arguments.append(.double(Double(bitPattern: UInt64(bitPattern: v))))
            case UInt8(ascii: "T"): arguments.append(.true)
            case UInt8(ascii: "F"): arguments.append(.false)
            case UInt8(ascii: "N"): arguments.append(.null)
            case UInt8(ascii: "I"): arguments.append(.impulse)
            case UInt8(ascii: "b"):
                guard let size = reader.int32(), size >= 0, reader.offset + Int(size) <= bytes.count else { return nil }
                arguments.append(.blob(Array(bytes[reader.offset..<reader.offset + Int(size)])))
                reader.offset += (Int(size) + 3) / 4 * 4
            case UInt8(ascii: "t"): guard let v = reader.int64() else { return nil }; arguments.append(.timetag(UInt64(bitPattern: v)))
            case UInt8(ascii: "c"): guard let v = reader.int32() else { return nil }; arguments.append(.char(UInt8(truncatingIfNeeded: v)))
            case UInt8(ascii: "m"):
                guard let v = reader.int32() else { return nil }
                let w = UInt32(bitPattern: v)
                arguments.append(.midi(UInt8(w >> 24), UInt8(w >> 16 & 0xFF), UInt8(w >> 8 & 0xFF), UInt8(w & 0xFF)))
            case UInt8(ascii: "r"): guard let v = reader.int32() else { return nil }; arguments.append(.rgba(UInt32(bitPattern: v)))
            default: return nil
            }
        }
        return [OSCTestMessage(address, arguments)]
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func string() -> String? {
            guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
            let value = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = (end + 4) / 4 * 4
            return value
        }

        mutating func int32() -> Int32? {
            guard offset + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[offset..<offset + 4] { value = value << 8 | UInt32(byte) }
            offset += 4
            return Int32(bitPattern: value)
        }

        mutating func int64() -> Int64? {
            guard offset + 8 <= bytes.count else { return nil }
            var value: UInt64 = 0
            for byte in bytes[offset..<offset + 8] { value = value << 8 | UInt64(byte) }
            offset += 8
            return Int64(bitPattern: value)
        }
    }
}

/// A plain UDP socket talking OSC to one SoundFit instance on 127.0.0.1.
final class OSCTestClient: OSCTestReceiving, @unchecked Sendable {
    let serverPort: UInt16
    private let fd: Int32
    /// Every message received, in order (for diagnostics).
    private(set) var log: [OSCTestMessage] = []
    /// Every datagram received, raw, in order.
    private(set) var packets: [[UInt8]] = []
    /// Received but not yet consumed by a `waitFor`.
    var pending: [OSCTestMessage] = []

    /// The IPv4 address (host byte order) SoundFit listens on; 127.0.0.1 unless told otherwise.
    let serverAddress: UInt32
    /// The IPv4 address (host byte order) this client sends from.
    let localAddress: UInt32
    /// The UDP port this client sends from (and receives replies on).
    let localPort: UInt16

    /// A client bound to `localAddress` (any 127.x.y.z is local on Linux, so a test can send
    /// from 127.0.0.2 to check `--osc-allow`) talking to `serverAddress:port`.
    init(port: UInt16, localAddress: UInt32 = 0x7F00_0001, serverAddress: UInt32 = 0x7F00_0001) throws {
        serverPort = port
        self.serverAddress = serverAddress
        self.localAddress = localAddress
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        var bufferBytes: Int32 = 4 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        var local = Self.loopback(port: 0, address: localAddress)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw IntegrationError("bind: \(String(cString: strerror(errno)))")
        }
        let boundAddress = BoundSocketAddress.of(descriptor)
        fd = descriptor
        localPort = UInt16(bigEndian: boundAddress.sin_port)
    }

    /// A client on a UDP socket made and bound elsewhere (another network namespace's, see
    /// `NetJackBoxes.socket`), talking to `serverAddress:port`. The client owns `descriptor`.
    init(descriptor: Int32, port: UInt16, serverAddress: UInt32) {
        serverPort = port
        self.serverAddress = serverAddress
        var bufferBytes: Int32 = 4 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        let boundAddress = BoundSocketAddress.of(descriptor)
        fd = descriptor
        localAddress = UInt32(bigEndian: boundAddress.sin_addr.s_addr)
        localPort = UInt16(bigEndian: boundAddress.sin_port)
    }

    /// Whether nothing listens on UDP `address:port`: a socket connected there sends `/ping`,
    /// and Linux reports the ICMP port-unreachable of a closed port as `ECONNREFUSED` on the
    /// next receive. So "nobody there" is an event, not a silence. Throws when neither that nor
    /// an answer comes within `timeout`.
    static func portRefuses(address: UInt32 = 0x7F00_0001, port: UInt16, timeout: Duration = .seconds(5)) throws -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationError("socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(descriptor) }
        var target = loopback(port: port, address: address)
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw IntegrationError("connect: \(String(cString: strerror(errno)))") }
        var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let ping = OSCWire.encode(OSCTestMessage("/ping"))
        guard ping.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }) == ping.count else {
            throw IntegrationError("send: \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if received >= 0 { return false }
        if errno == ECONNREFUSED { return true }
        throw IntegrationError("no answer and no refusal from port \(port) within \(timeout): \(String(cString: strerror(errno)))")
    }

    /// `osc.udp://a.b.c.d:port/` of this client, as SoundFit names it.
    var url: String {
        let a = localAddress
        return "osc.udp://\(a >> 24).\(a >> 16 & 0xFF).\(a >> 8 & 0xFF).\(a & 0xFF):\(localPort)/"
    }

    deinit { Glibc.close(fd) }

    private static func loopback(port: UInt16, address hostOrder: UInt32 = 0x7F00_0001) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = hostOrder.bigEndian
        return address
    }

    // MARK: Sending

    func sendRaw(_ bytes: [UInt8]) {
        var destination = Self.loopback(port: serverPort, address: serverAddress)
        let sent = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        precondition(sent == bytes.count, "sendto failed: \(String(cString: strerror(errno)))")
    }

    func send(_ address: String, _ arguments: OSCValue...) {
        sendRaw(OSCWire.encode(OSCTestMessage(address, arguments)))
    }

    func sendBundle(_ messages: [OSCTestMessage], timetag: UInt64 = 1) {
        sendRaw(OSCWire.encodeBundle(messages, timetag: timetag))
    }

    // MARK: Receiving

    /// Reads every datagram that arrives within `timeout` (at most; returns early when
    /// `stopEarly` is satisfied by the pending messages).
    func receive(for timeout: Duration, stopEarly: () -> Bool) {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline - ContinuousClock.now
            let milliseconds = max(0, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    packets.append(Array(buffer[0..<count]))
                    let messages = OSCWire.decode(Array(buffer[0..<count]))
                        ?? [OSCTestMessage("/undecodable", [.blob(Array(buffer[0..<count]))])]
                    log += messages
                    pending += messages
                    if stopEarly() { return }
                }
                continue
            }
            if ContinuousClock.now >= deadline { return }
        }
    }

    /// Answers the `/subscribe/challenge ,s token` SoundFit sent this client, the target of
    /// another client's `/subscribe ,s url`, with `/subscribe/confirm ,s token`: what a target
    /// that wants the feedback does.
    func confirmSubscription(timeout: Duration = .seconds(5)) throws {
        let challenge = try waitFor("/subscribe/challenge", timeout: timeout) { $0.address == "/subscribe/challenge" }.match
        guard let token = challenge.string(0) else { throw IntegrationError("a challenge without a token: \(challenge)") }
        send("/subscribe/confirm", .string(token))
    }

    /// Consumes pending messages up to and including the first one matching `predicate`,
    /// receiving more until `timeout`. Returns the match and the messages consumed before it.
    func waitFor(_ description: String, timeout: Duration = .seconds(10),
                 where predicate: (OSCTestMessage) -> Bool) throws -> (match: OSCTestMessage, before: [OSCTestMessage]) {
        guard let found = takeFirst(timeout: timeout, where: predicate) else {
            throw IntegrationError("no \(description) within \(timeout); received: \(pending.map(\.description))")
        }
        return found
    }

    // MARK: Conversations

    /// `/ping` → `/pong`.
    func ping(timeout: Duration = .seconds(5)) throws {
        send("/ping")
        _ = try waitFor("/pong", timeout: timeout) { $0.address == "/pong" }
    }

    /// `/sync ,i id` → `/synced ,i id`: waits until every request sent before has ended.
    /// Returns the messages that arrived before `/synced` (consumed).
    @discardableResult
    func sync(_ id: Int32 = 1, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        send("/sync", .int(id))
        return try waitFor("/synced \(id)", timeout: timeout) { $0.address == "/synced" && $0.arguments == [.int(id)] }.before
    }

    /// What reached this client by the time `witness` got its `/synced`. SoundFit handles the
    /// packets of its socket one at a time in arrival order, on its receive thread, so every
    /// packet this client sent before the witness's `/sync` was handled, and answered if it
    /// ever will be, before `/synced` left. For a client SoundFit does not answer (outside
    /// `--osc-allow`, refused) silence is then shown by an event, not by a listening window.
    func received(bySyncOf witness: OSCTestClient) throws -> [OSCTestMessage] {
        try witness.sync()
        return collect(for: .zero)
    }

    /// Queries a parameter (no arguments) and returns the value of the reply `<address> <value>`.
    func query(_ address: String) throws -> OSCValue {
        send(address)
        let reply = try waitFor("reply to query \(address)") { $0.address == address && $0.arguments.count == 1 }
        return reply.match.arguments[0]
    }

    /// Sets a parameter and waits for its terminal `/state`. Returns every `/state` report for
    /// the address, in order (the last is the terminal one).
    @discardableResult
    func set(_ address: String, _ value: OSCValue, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        send(address, value)
        return try waitForTerminalState(address, timeout: timeout)
    }

    /// Waits for `/state address applied|failed|superseded …`; returns the `/state` reports for
    /// `address` consumed on the way (applying, …, terminal).
    func waitForTerminalState(_ address: String, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        let terminal: Set<String> = ["applied", "failed", "superseded"]
        let result = try waitFor("terminal /state for \(address)", timeout: timeout) {
            $0.address == "/state" && $0.string(0) == address && terminal.contains($0.string(1) ?? "")
        }
        return result.before.filter { $0.address == "/state" && $0.string(0) == address } + [result.match]
    }

    /// A client of the soundfit listening on `port` once it is ready: its `/ping` answered and
    /// its processing session active.
    static func inSession(port: UInt16) throws -> OSCTestClient {
        let client = try OSCTestClient(port: port)
        try client.ping()
        try client.waitForSession()
        return client
    }

    /// Polls `/session` until it reports `active`; returns the reply.
    @discardableResult
    func waitForSession(timeout: Duration = .seconds(30)) throws -> OSCTestMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            send("/session")
            let reply = try waitFor("/session") { $0.address == "/session" }.match
            if reply.string(0) == "active" { return reply }
            if ContinuousClock.now >= deadline {
                throw IntegrationError("no active processing session within \(timeout): \(reply)")
            }
            Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
        }
    }

    /// `/status` as a dictionary of its key/value pairs.
    func status() throws -> [String: OSCValue] {
        send("/status")
        let reply = try waitFor("/status") { $0.address == "/status" }.match
        var fields: [String: OSCValue] = [:]
        var index = 0
        while index + 1 < reply.arguments.count {
            if let key = reply.arguments[index].stringValue { fields[key] = reply.arguments[index + 1] }
            index += 2
        }
        return fields
    }

    /// Polls `/status` until `condition` holds for it; returns the last status.
    func waitForStatus(timeout: Duration, _ condition: ([String: OSCValue]) -> Bool) throws -> [String: OSCValue] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try status()
            if condition(status) { return status }
            if ContinuousClock.now >= deadline {
                throw IntegrationError("status did not reach the expected state within \(timeout): \(status)")
            }
            Thread.sleep(forTimeInterval: 0.1)  // polls a condition (with a deadline)
        }
    }
}

extension OSCTestClient {
    /// Waits, as a subscriber, for the feedback of another client's change of `address` to
    /// `value`: the value and the terminal state (in either order). Returns the messages that
    /// came before them (consumed), the two excluded.
    ///
    /// Used as a marker: subscriber feedback is flushed on its own task, so `/sync` does not
    /// order it, but feedback to one subscriber keeps its order (its queue drains in the order
    /// entries were first queued, and a later flush drains at least the flush delay after an
    /// earlier one). Values are queued in the order changes applied, a terminal state as its
    /// request ends; waiting for both of the marker's, whatever of either kind was queued for
    /// this client before the marker's change arrives before them.
    @discardableResult
    func waitForChangeFeedback(_ address: String, _ value: OSCValue, timeout: Duration = .seconds(10)) throws -> [OSCTestMessage] {
        try waitForChangeFeedback(address, timeout: timeout,
                            value: { $0.address == address && $0.arguments == [value] },
                            terminal: { $0.arguments.count >= 3 && $0.arguments[2] == value })
    }

    /// As above, for a value that arrives in another form (`value` recognises it) and the
    /// terminal state `terminal` recognises.
    @discardableResult
    func waitForChangeFeedback(_ address: String, timeout: Duration = .seconds(10), value isValue: @escaping (OSCTestMessage) -> Bool,
                         terminal: @escaping (OSCTestMessage) -> Bool = { _ in true }) throws -> [OSCTestMessage] {
        let isTerminal: (OSCTestMessage) -> Bool = { $0.isTerminalState && $0.string(0) == address && terminal($0) }
        let first = try waitFor("feedback of \(address) or its terminal state", timeout: timeout) { isValue($0) || isTerminal($0) }
        let valueFirst = isValue(first.match)
        let second = try waitFor("the rest of the feedback of \(address)", timeout: timeout) {
            valueFirst ? isTerminal($0) : isValue($0)
        }
        return first.before + second.before
    }
}
