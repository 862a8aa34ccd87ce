import Foundation
import Glibc
import NIOHTTP1

/// Who may use the HTTP and WebSocket port, so that no web page a listener happens to open can
/// drive SoundFit (cross-site WebSocket) and no DNS name an attacker points at 127.0.0.1 can
/// read it (DNS rebinding).
///
/// - **Host**: every request must name this server: a loopback name or address (`localhost`,
///   `127.0.0.0/8`, `[::1]`), the address SoundFit listens on, or a name of
///   `--http-allow-host`; with or without a port. A browser always sends the name it resolved,
///   so a rebound name (`evil.example`) is refused.
/// - **Origin**: a WebSocket upgrade and every state-changing request (any method but GET,
///   HEAD, OPTIONS) and every costly read (`HTTPRoute.isCostly`: `/verify`) that carry an `Origin` need the page's own origin (`http://` + an allowed
///   host + this port) or one of `--http-allow-origin`. Browsers always send `Origin` on a
///   WebSocket handshake (and on cross-origin POSTs), so a missing `Origin` is a non-browser
///   client (an OSCQuery library, `websocat`, a script) and is let through: such a client could
///   forge any header anyway, and is the token's business.
/// - **Token** (Jupyter-style): when set (`--http-token`, or generated at start when the port is
///   exposed beyond loopback), a WebSocket upgrade and every state-changing request must carry
///   it as `?token=` or `Authorization: Bearer`. Reads (GET, HEAD) need none.
///
/// Anything else is answered `403` with a JSON reason.
///
/// Thread rules: immutable; checked on the event loop (upgrades) and in responder tasks.
public struct WebAccess: Sendable {
    /// Host names and addresses allowed besides the loopback ones, lowercased, without a port.
    public var allowedHosts: Set<String>
    /// Origins allowed besides the page's own, as `scheme://host[:port]`, lowercased.
    public var allowedOrigins: Set<String>
    /// What a WebSocket upgrade and a state-changing request must present; nil: nothing.
    public var token: String?

    /// - Parameters:
    ///   - allowedHosts: `--http-allow-host` names (and the listening address); a port, brackets
    ///     and case are ignored.
    ///   - allowedOrigins: `--http-allow-origin` origins; a trailing `/` and case are ignored.
    public init(allowedHosts: [String] = [], allowedOrigins: [String] = [], token: String? = nil) {
        self.allowedHosts = Set(allowedHosts.compactMap { Self.hostName(ofHost: $0) })
        self.allowedOrigins = Set(allowedOrigins.compactMap(Self.normalizedOrigin))
        self.token = token
    }

    /// A random token of 32 hex digits (128 bits from the system's generator).
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Why `request` is refused (the reason for its `403`), nil when it may proceed. `port`: the
    /// port this server is bound to (the page's own origin carries it).
    /// `costly`: a read that costs seconds (`HTTPRoute.isCostly`), checked as a state-changing request.
    func refusal(method: HTTPMethod, query: String?, headers: HTTPHeaders, port: UInt16, costly: Bool = false) -> String? {
        let hosts = headers["Host"]
        guard hosts.count == 1, let host = hosts.first else {
            return hosts.isEmpty ? "a request needs a Host header naming this server (127.0.0.1:\(port))"
                : "a request needs exactly one Host header, got \(hosts.count)"
        }
        guard let name = Self.hostName(ofHost: host), isAllowed(hostName: name) else {
            return "Host '\(host.prefix(100))' is not a name of this server: only loopback names, the listening address "
                + "and --http-allow-host names are answered (a guard against DNS rebinding)"
        }
        let upgrade = headers["Upgrade"].contains { $0.lowercased().contains("websocket") }
        let stateChanging = costly || ![HTTPMethod.GET, .HEAD, .OPTIONS].contains(method)
        guard upgrade || stateChanging else { return nil }
        let what = upgrade ? "a WebSocket" : "a \(method.rawValue) request"
        let origins = headers["Origin"]
        if let origin = origins.first {
            guard origins.count == 1, isAllowed(origin: origin, port: port) else {
                return "\(what) from the origin '\(origin.prefix(100))' is refused: only this page's own origin "
                    + "(http://127.0.0.1:\(port)) and --http-allow-origin origins may control SoundFit"
            }
        }
        if let token, !Self.presents(token, query: query, headers: headers) {
            return "\(what) needs this server's token, as ?token= or Authorization: Bearer "
                + "(the ready line's http= URL carries it; --http-token sets it)"
        }
        return nil
    }

    /// `localhost`, `127.0.0.0/8`, `::1`, or an allowed name.
    func isAllowed(hostName name: String) -> Bool {
        if name == "localhost" || name == "::1" || allowedHosts.contains(name) { return true }
        var address = in_addr()
        return inet_pton(AF_INET, name, &address) == 1 && UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// The page's own origin (`http://` + an allowed host + `port`), or an allowed origin.
    func isAllowed(origin: String, port: UInt16) -> Bool {
        guard let normalized = Self.normalizedOrigin(origin) else { return false }
        if allowedOrigins.contains(normalized) { return true }
        guard normalized.hasPrefix("http://") else { return false }
        let authority = String(normalized.dropFirst("http://".count))
        guard let name = Self.hostName(ofHost: authority), isAllowed(hostName: name) else { return false }
        return Self.port(ofHost: authority) ?? 80 == port
    }

    /// `?token=` or `Authorization: Bearer`, compared in constant time.
    private static func presents(_ token: String, query: String?, headers: HTTPHeaders) -> Bool {
        var presented: [String] = headers["Authorization"].compactMap { value in
            value.lowercased().hasPrefix("bearer ") ? String(value.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces) : nil
        }
        presented += HTTPRequest.queryItems(of: query).filter { $0.name == "token" }.map(\.value)
        return presented.contains { constantTimeEqual($0, token) }
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `Example.com:7701` → `example.com`, `[::1]:7701` → `::1`; nil when malformed.
    public static func hostName(ofHost host: String) -> String? {
        let host = host.trimmingCharacters(in: .whitespaces).lowercased()
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
            return String(host[host.index(after: host.startIndex)..<close])
        }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty, parts.count <= 2,
              parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)),
              name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }) else { return nil }
        return String(name)
    }

    /// The port of `host:port` (`[::1]:7701` too); nil without one.
    static func port(ofHost host: String) -> UInt16? {
        guard let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") else { return nil }
        return UInt16(host[host.index(after: colon)...])
    }

    /// `HTTP://Example.com:8080/` → `http://example.com:8080`; nil unless `scheme://authority`.
    public static func normalizedOrigin(_ origin: String) -> String? {
        var origin = origin.trimmingCharacters(in: .whitespaces).lowercased()
        if origin.hasSuffix("/") { origin.removeLast() }
        guard let separator = origin.range(of: "://"), !origin[..<separator.lowerBound].isEmpty,
              let host = hostName(ofHost: String(origin[separator.upperBound...])), !host.isEmpty else { return nil }
        return origin
    }

    /// The IPv4 addresses of this machine's interfaces: the names a page on the network reaches
    /// SoundFit by when it listens on `0.0.0.0`.
    public static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var entry = first
        while let current = entry {
            if let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                    var raw = ipv4.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN))
                }
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            entry = current.pointee.ifa_next
        }
        return addresses
    }
}
