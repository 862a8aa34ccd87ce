import Logging
import NIOHTTP1
import OSCCore
import SoundFitOSC

/// Answers every HTTP request: a route of the table when one takes the path, else the OSCQuery
/// namespace (`GET /`, `GET /<path>[?ATTRIBUTE]`, `GET /?HOST_INFO`).
///
/// Thread rules: `respond` runs in a task, off the event loop.
struct WebResponder: Sendable {
    let routes: [HTTPRoute]
    let namespace: OSCQueryNamespace
    let hostInfo: @Sendable () -> OSCQueryHostInfo
    let limits: WebLimits
    let logger: Logger
    let refusals: RateLimitedLog<String>
    let access: WebAccess
    /// The port bound (the page's own origin carries it).
    let port: @Sendable () -> UInt16

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        let costly = routes.first(where: { $0.takes(request.path) })?.isCostly ?? false
        if let refusal = access.refusal(method: request.method, query: request.query, headers: request.headers, port: port(),
                                        costly: costly) {
            logRefusal(.forbidden, "\(request.method.rawValue) \(request.path.prefix(100)): \(refusal)", peer: request.peer)
            return .error(.forbidden, refusal)
        }
        var request = request
        request.query = Self.removingToken(from: request.query)
        if let route = routes.first(where: { $0.takes(request.path) }) {
            guard route.methods.contains(request.method) else { return methodNotAllowed(request, allowed: route.methods) }
            return await route.respond(request)
        }
        guard request.method == .GET || request.method == .HEAD else {
            return methodNotAllowed(request, allowed: [.GET, .HEAD])
        }
        // The proposal: for HOST_INFO "the path in the URL is functionally irrelevant". Any node
        // answers it; a path outside the namespace is 404, as for any other attribute.
        if request.query == "HOST_INFO" {
            guard namespace.contains(OSCQueryNamespace.normalized(request.path)) else {
                return .error(.notFound, "\(request.path) is not in the namespace (GET / lists it; GET /?HOST_INFO answers)")
            }
            return .json(hostInfo(answering: request).json)
        }
        return namespace.respond(path: request.path, query: request.query)
    }

    /// HOST_INFO for `request`'s client: `OSC_IP` is an address it can use. Listening on
    /// 0.0.0.0 (every address) is no address to send to; the one its HTTP request arrived on is.
    func hostInfo(answering request: HTTPRequest) -> OSCQueryHostInfo {
        var info = hostInfo()
        if info.oscHost == "0.0.0.0", let local = request.localAddress { info.oscHost = local }
        return info
    }

    /// The query without its `token=` items (the token is the access check's, not the route's).
    static func removingToken(from query: String?) -> String? {
        guard let query, query.contains("token=") else { return query }
        let rest = query.split(separator: "&").filter { !$0.hasPrefix("token=") }.joined(separator: "&")
        return rest.isEmpty ? nil : rest
    }

    private func methodNotAllowed(_ request: HTTPRequest, allowed: [HTTPMethod]) -> HTTPResponse {
        var response = HTTPResponse.error(.methodNotAllowed, "\(request.method.rawValue) \(request.path): only "
            + allowed.map(\.rawValue).joined(separator: ", ") + " are answered here")
        response.headers.append(("Allow", allowed.map(\.rawValue).joined(separator: ", ")))
        return response
    }

    /// Logs a refused request or connection, rate limited (a client can cause them at any rate).
    func logRefusal(_ status: HTTPResponseStatus, _ reason: String, peer: HTTPPeer) {
        refusals.log("http \(status.code)", "HTTP \(status.code) to \(peer): \(reason)")
    }
}
