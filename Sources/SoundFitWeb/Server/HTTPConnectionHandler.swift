import Logging
import NIOCore
import NIOHTTP1
import SoundFitModel
import SoundFitOSC

/// One HTTP connection: collects each request whole (bounded head and body, within the request
/// timeout), hands it to the server's responder in a task, and writes the answer. Requests on
/// one connection are answered in order (NIO's pipelining handler holds the next until then).
///
/// Thread rules: the connection's event loop only; the responder runs off it.
final class HTTPConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let responder: WebResponder
    private let peer: OSCPeer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Set once the connection is being closed after a refusal: what follows is dropped.
    private var refused = false
    private var requestDeadline: Scheduled<Void>?

    init(responder: WebResponder, peer: OSCPeer) {
        self.responder = responder
        self.peer = peer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armRequestDeadline(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let headBytes = head.uri.utf8.count + head.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            guard headBytes <= responder.limits.maximumHeadBytes else {
                refuse(.requestHeaderFieldsTooLarge,
                       "request head of \(headBytes) bytes: the limit is \(responder.limits.maximumHeadBytes)", context: context)
                return
            }
            self.head = head
            body = []
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= responder.limits.maximumBodyBytes else {
                refuse(.payloadTooLarge, "request body over \(responder.limits.maximumBodyBytes) bytes", context: context)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            requestDeadline?.cancel()
            requestDeadline = nil
            answer(head, context: context)
        }
    }

    /// Parses the target, lets the responder answer off the event loop, and writes the answer.
    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let rawPath = target.first, rawPath.hasPrefix("/"), let path = HTTPRequest.percentDecoded(String(rawPath)) else {
            refuse(.badRequest, "the request target must be a path starting with '/' (percent-encoded UTF-8), got '\(head.uri.prefix(200))'",
                   context: context)
            return
        }
        let request = HTTPRequest(method: head.method, path: path, query: target.count > 1 ? String(target[1]) : nil,
                                  headers: head.headers, body: body, peer: peer)
        body = []
        let keepAlive = head.isKeepAlive
        let version = head.version
        let responder = self.responder
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: eventLoop)
        Task {
            let response = await responder.respond(to: request)
            eventLoop.execute {
                let (handler, context) = bound.value
                handler.write(response, version: version, keepAlive: keepAlive, omitBody: request.method == .HEAD,
                              context: context)
            }
        }
    }

    private func write(_ response: HTTPResponse, version: HTTPVersion, keepAlive: Bool, omitBody: Bool,
                       context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: response.status, headers: headers))),
                      promise: nil)
        if !omitBody, !response.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            armRequestDeadline(context: context)
        } else {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// Answers `status` with `reason` and closes the connection.
    private func refuse(_ status: HTTPResponseStatus, _ reason: String, context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        requestDeadline?.cancel()
        responder.logRefusal(status, reason, peer: peer)
        write(.error(status, reason), version: .http1_1, keepAlive: false, omitBody: false, context: context)
    }

    /// A request must arrive whole within the request timeout of the connection opening or of
    /// the last answer (a slowloris client holds a connection no longer than that).
    private func armRequestDeadline(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let timeout = responder.limits.requestTimeout
        requestDeadline = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.nanoseconds))) {
            let (handler, context) = bound.value
            handler.refuse(.requestTimeout, "no whole request within \(timeout.seconds) s", context: context)
        }
    }

    /// Malformed HTTP (NIO's parser): 400 with the parser's reason, then close.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let parserError = error as? HTTPParserError {
            let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
            refuse(status, "malformed HTTP request: \(parserError)", context: context)
        } else {
            context.close(promise: nil)
        }
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
