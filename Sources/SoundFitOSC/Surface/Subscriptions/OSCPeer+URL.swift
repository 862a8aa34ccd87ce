import OSCCore

/// Why an OSC URL (`/subscribe ,s url`) was rejected. The description is the `/error` message.
public struct OSCURLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// liblo-style OSC URLs: `osc.udp://host:port` (an optional trailing `/` is accepted).
///
/// Only UDP and IPv4 (or `localhost`): SoundFit sends feedback from its one UDP socket, and a
/// host name would need a DNS lookup on the receive thread, so names are rejected, not resolved.
extension OSCPeer {
    public static let urlScheme = "osc.udp"

    /// Parses `osc.udp://host:port[/]`.
    public init(oscURL text: String) throws(OSCURLError) {
        guard let separator = text.range(of: "://") else {
            throw OSCURLError("malformed OSC URL '\(text)': expected osc.udp://host:port")
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == Self.urlScheme else {
            throw OSCURLError("unsupported OSC URL scheme '\(scheme)' in '\(text)': SoundFit sends over UDP only (osc.udp://host:port)")
        }
        var rest = text[separator.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.hasPrefix("[") {
            throw OSCURLError("OSC URL '\(text)': IPv6 is not supported, use an IPv4 address")
        }
        guard let colon = rest.lastIndex(of: ":"), !rest[..<colon].isEmpty else {
            throw OSCURLError("malformed OSC URL '\(text)': expected osc.udp://host:port")
        }
        let host = String(rest[..<colon])
        let portText = rest[rest.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
              let port = Int(portText), (1...65535).contains(port) else {
            throw OSCURLError("OSC URL '\(text)': port must be a number 1…65535")
        }
        guard host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) || host == "localhost",
              let peer = OSCPeer(host: host, port: UInt16(port)) else {
            throw OSCURLError("OSC URL '\(text)': host must be an IPv4 address or localhost")
        }
        self = peer
    }

    /// `osc.udp://host:port/`, the form liblo prints.
    public var oscURL: String { "\(Self.urlScheme)://\(host):\(port)/" }
}
