import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import SoundFitModel
import SoundFitOSC

/// One HTTP connection: collects each request whole (bounded head and body, within the request
/// timeout), hands it to the server's responder in a task, and writes the answer. Requests on
/// one connection are answered in order (NIO's pipelining handler holds the next until then).
///
/// Answers queued for a client that does not read are bounded: while the channel is not
/// writable (over its high watermark) no more is read, so no more requests are parsed; past
/// `WebLimits.maximumQueuedBytes` queued the connection is closed.
///
/// Thread rules: the connection's event loop only; the responder runs off it.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let responder: WebResponder
    private let peer: HTTPPeer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Set once the connection is being closed after a refusal: what follows is dropped.
    private var refused = false
    private var requestDeadline: Scheduled<Void>?
    /// Response bytes written but not yet handed to the kernel.
    private var queuedBytes = 0
    /// A `read` held back while the channel was not writable, issued once it is again.
    private var readHeld = false

    init(responder: WebResponder, peer: HTTPPeer) {
        self.responder = responder
        self.peer = peer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armRequestDeadline(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        // Removed by the WebSocket upgrade: the WebSocket handlers read from here on.
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    /// No reading while the client does not take what it was sent.
    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, readHeld {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
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
        // A fragment (`#x`) is the client's own business (RFC 3986; the OSCQuery proposal says
        // strip it): neither path nor query. An encoded `%23` stays part of either.
        let target = head.uri.prefix { $0 != "#" }.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let rawPath = target.first, rawPath.hasPrefix("/"), let path = HTTPRequest.percentDecoded(String(rawPath)) else {
            refuse(.badRequest, "the request target must be a path starting with '/' (percent-encoded UTF-8), got '\(head.uri.prefix(200))'",
                   context: context)
            return
        }
        var parsed = HTTPRequest(method: head.method, path: path, query: target.count > 1 ? String(target[1]) : nil,
                                 headers: head.headers, body: body, peer: peer)
        parsed.localAddress = context.channel.localAddress?.ipAddress
        let request = parsed  // the responder's task gets a copy, not the variable
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
                // A refused client (403: Host, Origin, token) gets nothing more on this connection.
                handler.write(response, version: version, keepAlive: keepAlive && response.status != .forbidden,
                              omitBody: request.method == .HEAD,
                              context: context)
            }
        }
    }

    private func write(_ response: HTTPResponse, version: HTTPVersion, keepAlive: Bool, omitBody: Bool,
                       context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: response.status, headers: headers))),
                      promise: nil)
        var size = 64 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        if !omitBody, !response.body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            size += response.body.count
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        queuedBytes += size
        written.assumeIsolated().whenComplete { [self] _ in queuedBytes -= size }
        guard queuedBytes <= responder.limits.maximumQueuedBytes else {
            refused = true
            requestDeadline?.cancel()
            responder.logRefusal(.tooManyRequests, "closed the connection: \(queuedBytes) bytes of answers queued that it does not read "
                                 + "(the limit is \(responder.limits.maximumQueuedBytes))", peer: peer)
            context.close(promise: nil)
            return
        }
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
            handler.timeOut(after: timeout, context: context)
        }
    }

    /// `408 Request Timeout`, then close. Written as bytes below NIO's response encoder: between
    /// requests NIO's pipelining handler takes a response as a protocol violation (it asserts in
    /// debug builds and fails the write, so the socket closed without the answer).
    private func timeOut(after timeout: Duration, context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        guard context.channel.isWritable else {
            // Its answers are still queued: a 408 behind them would wait for it forever.
            responder.logRefusal(.requestTimeout, "closed the connection: it does not read its answers", peer: peer)
            context.close(promise: nil)
            return
        }
        let reason = "no whole request within \(timeout.seconds) s"
        responder.logRefusal(.requestTimeout, reason, peer: peer)
        let body = HTTPResponse.error(.requestTimeout, reason).body
        var buffer = context.channel.allocator.buffer(capacity: body.count + 128)
        buffer.writeString("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                           + "Connection: close\r\n\r\n")
        buffer.writeBytes(body)
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            context.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        // A client whose kernel buffer is full never takes the 408: closed a little later regardless.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .seconds(2)) { bound.value.close(promise: nil) }
    }

    /// Malformed HTTP (NIO's parser): 400 with the parser's reason, then close.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A WebSocket upgrade refused by `WebAccess`: the request follows as a plain one, and
        // the responder answers it 403.
        if error is NIOWebSocketUpgradeError { return }
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
