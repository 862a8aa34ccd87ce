import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import OSCCore
import SoundFitJSON
import SoundFitModel
import SoundFitOSC
import SoundFitRuntime
import Synchronization

/// SoundFit's HTTP and WebSocket port (`--http-port`, default the OSC port + 1): the OSCQuery namespace,
/// the web page under `/ui`, the routes other modules add, and OSC over WebSocket, on one TCP
/// port bound to the OSC host. SwiftNIO directly (HTTP/1.1 and the WebSocket upgrade on one
/// port, one event-loop thread).
///
/// Connections from outside `--osc-allow` are closed when accepted; requests from pages and
/// names that are not this server's are refused by `WebAccess`; every other bound is in
/// `WebLimits`.
///
/// Thread rules: create, `run` and `close` from any thread except the JACK process callback.
/// Connections are served on the server's one event-loop thread; route handlers in tasks.
public final class WebServer: Sendable {
    public struct OpenError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The bound address (port 0 resolved).
    public let boundPeer: OSCPeer
    /// OSC over the WebSocket: give it to the OSC surface as one of its streams.
    public let transport: WebSocketOSCTransport
    public let limits: WebLimits
    /// Who may use the port (its token is printed in the ready line).
    public let access: WebAccess
    private let listens: WebSocketListens
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let connections: ConnectionCount
    private let runtime: SoundFitRuntime
    private let logger: Logger
    private let meterNodes: OSCQueryMeterNodes

    /// Listens on `host:port` (0 picks a free port). Throws when the address is taken.
    /// `stateKeeper`: the patches, served as command nodes (`OSCQueryPatchNodes`) whose changes
    /// every WebSocket hears (`PATH_CHANGED`); nil without a state directory.
    public init(host: String, port: UInt16, runtime: SoundFitRuntime, stateKeeper: StateKeeper? = nil, routes: [HTTPRoute],
                hostInfo: @escaping @Sendable (_ webPort: UInt16) -> OSCQueryHostInfo,
                allowList: OSCAllowList = .everyone, access: WebAccess = WebAccess(), limits: WebLimits = WebLimits(),
                logger: Logger) throws(OpenError) {
        guard OSCPeer(host: host, port: port) != nil else {
            throw OpenError(description: "invalid HTTP host '\(host)' (expected an IPv4 address or localhost)")
        }
        let transport = WebSocketOSCTransport()
        let listens = WebSocketListens()
        let meterNodes = OSCQueryMeterNodes()
        let namespace = OSCQueryNamespace(runtime: runtime, stateKeeper: stateKeeper, meterNodes: meterNodes)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let boundPort = BoundPort()
        let responder = WebResponder(
            routes: routes, namespace: namespace, hostInfo: { hostInfo(boundPort.port.load(ordering: .relaxed)) }, limits: limits,
            logger: logger, refusals: RateLimitedLog { [logger] line in logger.warning("\(line)") }, access: access,
            port: { boundPort.port.load(ordering: .relaxed) })
        let connections = ConnectionCount()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // HTTP: reading stops above a quarter of the bound (HTTPConnectionHandler); the
            // WebSocket upgrade raises the mark to the bound itself.
            .childChannelOption(.writeBufferWaterMark,
                                value: .init(low: limits.maximumQueuedBytes / 8, high: limits.maximumQueuedBytes / 4))
            .childChannelInitializer { channel in
                Self.accept(channel, allowList: allowList, connections: connections, responder: responder,
                            transport: transport, listens: listens, namespace: namespace)
            }
        do {
            channel = try bootstrap.bind(host: host == "localhost" ? "127.0.0.1" : host, port: Int(port)).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw OpenError(description: "cannot listen for HTTP on \(host):\(port): \(error) (--http-port 0 picks a free port, --no-http turns it off)")
        }
        let actualPort = UInt16(channel.localAddress?.port ?? Int(port))
        boundPort.port.store(actualPort, ordering: .relaxed)
        boundPeer = OSCPeer(host: host, port: actualPort)!
        self.transport = transport
        self.listens = listens
        self.limits = limits
        self.access = access
        self.group = group
        self.connections = connections
        self.runtime = runtime
        self.logger = logger
        self.meterNodes = meterNodes
        stateKeeper?.onLibraryChange { [transport] in
            for path in OSCQueryPatchNodes.changingPaths {
                transport.sendToAll(text: JSONValue.object(JSONObject(["COMMAND": .string("PATH_CHANGED"), "DATA": .string(path)])))
            }
        }
    }

    /// Serves the meter messages as LISTENable nodes (`OSCQueryMeterNodes`), streamed by
    /// `surface` (the OSC surface this server's `transport` belongs to) for `channelCount` channels.
    public func attach(_ surface: OSCControlSurface, channelCount: Int) {
        meterNodes.attach(surface, channelCount: channelCount)
    }

    /// Open connections now (HTTP and WebSocket).
    public var connectionCount: Int { connections.value.load(ordering: .relaxed) }

    /// Streams applied changes to the WebSockets that LISTEN to them, as the OSC message a
    /// subscriber gets (`/filter/cutoff ,f 2500`; booleans as int 0/1), until cancelled. The
    /// connection that made a change is not told (it gets `/state`).
    public func run() async {
        for await change in runtime.changeUpdates() {
            let listeners = listens.listeners(of: change.address)
            guard !listeners.isEmpty else { continue }
            let origin = change.origin?.sender(as: OSCSender.self)
            let packet = OSCCodec.encode(OSCMessage(change.address, [change.value.oscArgument]))
            for peer in listeners where !(origin?.transport === transport && origin?.peer == peer) {
                transport.send(packet, to: peer)
            }
        }
    }

    /// Closes the port and every connection.
    public func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// A new connection: closed at once when its source is refused, answered 503 when the server
    /// is full, else set up for HTTP with the WebSocket upgrade.
    private static func accept(_ channel: any Channel, allowList: OSCAllowList, connections: ConnectionCount,
                               responder: WebResponder, transport: WebSocketOSCTransport, listens: WebSocketListens,
                               namespace: OSCQueryNamespace) -> EventLoopFuture<Void> {
        guard let address = channel.remoteAddress, let ip = address.ipAddress, let port = address.port,
              let peer = OSCPeer(host: ip, port: UInt16(port)), allowList.allows(peer) else {
            responder.refusals.log("refused \(channel.remoteAddress?.ipAddress ?? "?")",
                                   "closed an HTTP connection from \(channel.remoteAddress.map { "\($0)" } ?? "?"): not in --osc-allow")
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ClosingHandler(answer: nil))
            }
        }
        let client = HTTPPeer(host: peer.host, port: peer.port)
        guard connections.value.wrappingAdd(1, ordering: .relaxed).newValue <= responder.limits.maximumConnections else {
            connections.value.wrappingSubtract(1, ordering: .relaxed)
            responder.logRefusal(.serviceUnavailable, "\(responder.limits.maximumConnections) connections are open", peer: client)
            let reason = "{\"error\":\"too many connections: at most \(responder.limits.maximumConnections) at a time\"}"
            let answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(reason.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + reason
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ClosingHandler(answer: answer))
            }
        }
        channel.closeFuture.whenComplete { _ in connections.value.wrappingSubtract(1, ordering: .relaxed) }
        let limits = responder.limits
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: limits.maximumFrameBytes,
            // A refused upgrade goes on as a plain request, which the responder answers 403 with
            // the same check's reason.
            shouldUpgrade: { channel, head in
                let query = head.uri.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init)
                let refused = responder.access.refusal(method: head.method, query: query, headers: head.headers,
                                                       port: UInt16(channel.localAddress?.port ?? 0)) != nil
                return channel.eventLoop.makeSucceededFuture(refused ? nil : HTTPHeaders())
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.syncOptions?.setOption(
                        .writeBufferWaterMark, value: .init(low: limits.maximumQueuedBytes / 2, high: limits.maximumQueuedBytes))
                    try channel.pipeline.syncOperations.addHandlers([
                        WebSocketFrameValidator(peer: peer, refusals: responder.refusals),
                        IdleStateHandler(readTimeout: .nanoseconds(limits.webSocketPingInterval.nanoseconds)),
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 64,
                                                    maxAccumulatedFrameSize: limits.maximumFrameBytes),
                        WebSocketHandler(peer: peer, transport: transport, listens: listens, namespace: namespace,
                                         refusals: responder.refusals),
                    ])
                }
            })
        // NIO's HTTP server pipeline, assembled here so that the parser's head limit is ours and
        // the upgrade to a WebSocket removes our HTTP handler with NIO's.
        var parserLimits = NIOHTTPDecoderLimitConfiguration()
        parserLimits.maxHeaderFieldSize = limits.maximumHeadBytes
        parserLimits.maxHeaderListSize = limits.maximumHeadBytes
        parserLimits.maxHeaderFieldCount = 100
        return channel.eventLoop.makeCompletedFuture {
            let encoder = HTTPResponseEncoder()
            let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes,
                                                                  limitConfiguration: parserLimits))
            let pipelining = HTTPServerPipelineHandler()
            let http = HTTPConnectionHandler(responder: responder, peer: client)
            let upgrade = HTTPServerUpgradeHandler(upgraders: [upgrader], httpEncoder: encoder,
                                                   extraHTTPHandlers: [decoder, pipelining, http],
                                                   upgradeCompletionHandler: { _ in })
            try channel.pipeline.syncOperations.addHandlers([encoder, decoder, pipelining, upgrade, http])
        }
    }
}

/// Open connections, shared by the accepting code and each connection's close.
private final class ConnectionCount: Sendable {
    let value = Atomic<Int>(0)
}

/// The port bound, known once the server is (`HOST_INFO` reports it).
private final class BoundPort: Sendable {
    let port = Atomic<UInt16>(0)
}

/// A refused connection: once it is active, writes `answer` (if any) and closes.
private final class ClosingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let answer: String?

    init(answer: String?) {
        self.answer = answer
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let answer else {
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: answer))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
