import SoundFitJSON

/// `GET /?HOST_INFO`: who serves the namespace and how to reach its OSC server.
///
/// `OSC_TRANSPORT` is `UDP` (the port OSCQuery clients send to); OSC over TCP (SLIP or length-
/// prefixed) is served on the same port number, and the WebSocket of this very port (`WS_PORT`)
/// carries binary OSC too. `EXTENSIONS` names only what this server implements.
public struct OSCQueryHostInfo: Sendable {
    public var name: String
    public var oscHost: String
    public var oscPort: UInt16
    public var webSocketPort: UInt16
    /// Whether the web page is served under `/ui` (the `HTML` extension).
    public var servesPage: Bool

    public init(name: String, oscHost: String, oscPort: UInt16, webSocketPort: UInt16, servesPage: Bool) {
        self.name = name
        self.oscHost = oscHost
        self.oscPort = oscPort
        self.webSocketPort = webSocketPort
        self.servesPage = servesPage
    }

    /// The extensions implemented, each `true` (the proposal's form).
    public static let extensions = ["ACCESS", "VALUE", "RANGE", "DESCRIPTION", "UNIT", "CLIPMODE", "LISTEN", "PATH_CHANGED"]

    public var json: JSONValue {
        var extensions = JSONObject()
        for name in Self.extensions { extensions.append(name, .bool(true)) }
        if servesPage { extensions.append("HTML", .bool(true)) }
        return .object(JSONObject([
            "NAME": .string(name),
            "OSC_IP": .string(oscHost),
            "OSC_PORT": .number(Int(oscPort)),
            "OSC_TRANSPORT": .string("UDP"),
            "WS_PORT": .number(Int(webSocketPort)),
            "EXTENSIONS": .object(extensions),
        ]))
    }
}
