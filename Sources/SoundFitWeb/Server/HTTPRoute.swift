import Foundation
import NIOHTTP1
import SoundFitJSON
import SoundFitOSC

/// One HTTP request, whole (head and body), as a route sees it.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The path, percent-decoded, without the query (`/ui/index.html`).
    public var path: String
    /// What follows `?`, undecoded (`VALUE`, `points=256`); nil without one. The responder
    /// takes the access token's `token=` item out before a route sees it.
    public var query: String?
    /// The query as the client sent it, token included: what a redirect hands on, so a page
    /// opened with `?token=` keeps it.
    public var receivedQuery: String?
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The client's address and port.
    public var peer: HTTPPeer
    /// The address of ours the request arrived on (`192.168.1.5` when SoundFit listens on
    /// 0.0.0.0 and the client came over the LAN): one the client can reach. Nil when unknown.
    public var localAddress: String?

    public init(method: HTTPMethod, path: String, query: String?, headers: HTTPHeaders = [:], body: [UInt8] = [],
                peer: HTTPPeer) {
        self.method = method
        self.path = path
        self.query = query
        self.receivedQuery = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    /// The query's `name=value` pairs, percent-decoded (`?points=256&x` → `points: 256, x: ""`).
    public var queryItems: [(name: String, value: String)] { Self.queryItems(of: query) }

    /// The `name=value` pairs of `query`, percent-decoded.
    static func queryItems(of query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (HTTPRequest.percentDecoded(String(parts[0])) ?? String(parts[0]),
                    parts.count > 1 ? HTTPRequest.percentDecoded(String(parts[1])) ?? String(parts[1]) : "")
        }
    }

    /// `%2F` → `/`; nil when an escape is malformed or the bytes are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The answer to one request.
public struct HTTPResponse: Sendable {
    public var status: HTTPResponseStatus
    public var contentType: String
    public var body: [UInt8]
    /// Further headers (`Cache-Control`, …); the server adds `Content-Type` and `Content-Length`.
    public var headers: [(String, String)]

    public init(status: HTTPResponseStatus = .ok, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A JSON document (compact).
    public static func json(_ value: JSONValue, status: HTTPResponseStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(value.compactData()))
    }

    /// A refusal with its reason, `{"error": "…"}`: every bad request gets one.
    public static func error(_ status: HTTPResponseStatus, _ reason: String) -> HTTPResponse {
        json(.object(JSONObject(["error": .string(reason)])), status: status)
    }

    /// No content (an attribute the node does not carry, as libossia answers it).
    public static let noContent = HTTPResponse(status: .noContent, contentType: "text/plain", body: [])
}

/// One entry of the server's route table: requests whose path is `path` (or, for a prefix
/// route, starts with it) go to `respond`. Other modules add their routes here (the composition
/// root collects them); paths no route takes are the OSCQuery namespace's.
///
/// Thread rules: `respond` runs in a task of its own, never on the event loop; it may await.
public struct HTTPRoute: Sendable {
    public enum Match: Sendable {
        /// This path only (`/response`).
        case exact(String)
        /// This path and every path below it (`/ui` takes `/ui` and `/ui/…`).
        case prefix(String)
    }

    public var match: Match
    /// The methods the route answers; others get 405.
    public var methods: [HTTPMethod]
    public var respond: @Sendable (HTTPRequest) async -> HTTPResponse
    /// A read that costs seconds of work (`/verify`): `WebAccess` checks its `Origin` and token as
    /// a state-changing request's, so no foreign page can make SoundFit spend them.
    public var isCostly: Bool

    public init(_ match: Match, methods: [HTTPMethod] = [.GET, .HEAD], isCostly: Bool = false,
                respond: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) {
        self.match = match
        self.methods = methods
        self.isCostly = isCostly
        self.respond = respond
    }

    /// Whether the route takes `path`.
    func takes(_ path: String) -> Bool {
        switch match {
        case .exact(let exact): path == exact
        case .prefix(let prefix): path == prefix || path.hasPrefix(prefix.hasSuffix("/") ? prefix : prefix + "/")
        }
    }
}
