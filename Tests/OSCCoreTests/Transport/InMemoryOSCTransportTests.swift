import OSCCore
import Synchronization
import Testing

@Suite struct InMemoryOSCTransportTests {
    static let peer = OSCPeer(host: "127.0.0.1", port: 9000)!

    @Test func packetsAreDeliveredOnTheCallersThreadAndOversizedOnesReported() {
        let transport = InMemoryOSCTransport()
        #expect(!transport.receive(OSCMessage("/ping"), from: Self.peer), "nobody receives yet")
        let received = Mutex<[OSCPeer]>([])
        let oversized = Mutex<[Int]>([])
        transport.startReceiving(maximumPacketBytes: 64,
                                 onPacket: { _, peer in received.withLock { $0.append(peer) } },
                                 onOversized: { size, _ in oversized.withLock { $0.append(size) } })
        #expect(transport.receive(OSCMessage("/ping"), from: Self.peer))
        #expect(received.withLock { $0 } == [Self.peer])
        transport.receive([UInt8](repeating: 0, count: 65), from: Self.peer)
        #expect(oversized.withLock { $0 } == [65])
        #expect(received.withLock { $0 }.count == 1)
    }

    @Test func sentPacketsAreReadBackInOrder() async {
        let transport = InMemoryOSCTransport()
        let sender = OSCSender(peer: Self.peer, transport: transport)
        #expect(sender.send(OSCMessage("/a")))
        #expect(sender.send(OSCMessage("/b", [.int32(1)])))
        #expect(transport.readOutbound()?.message == OSCMessage("/a"))
        #expect(await transport.nextOutbound()?.message == OSCMessage("/b", [.int32(1)]))
        #expect(transport.readOutbound() == nil)
        transport.refuseSends(to: Self.peer)
        #expect(!sender.send(OSCMessage("/c")))
        #expect(transport.readAllOutbound().isEmpty)
    }

    @Test func aSenderIsItsPeerOnItsTransport() {
        let one = InMemoryOSCTransport(), other = InMemoryOSCTransport()
        #expect(OSCSender(peer: Self.peer, transport: one) == OSCSender(peer: Self.peer, transport: one))
        #expect(OSCSender(peer: Self.peer, transport: one) != OSCSender(peer: Self.peer, transport: other))
        #expect(one.isOwnEndpoint(one.endpoint) && !one.isOwnEndpoint(Self.peer))
    }
}
