import OSCCore
import SoundFitModel
import SoundFitEngine
import SoundFitOSC
import Testing

@Suite struct SubscriberRegistryTests {
    let cutoff = EngineSlot.filterCutoff.descriptor
    let q = EngineSlot.filterQ.descriptor

    private func peer(_ host: String, _ port: UInt16) -> OSCPeer { OSCPeer(host: host, port: port)! }
    private func url(_ peer: OSCPeer) -> SubscriptionRequest { SubscriptionRequest(url: peer) }
    private func describe(_ deliveries: [OSCDelivery]) -> [String] { deliveries.map(\.description) }

    @Test func subscribingTheSenderAndChangingItsForm() throws {
        var registry = SubscriberRegistry()
        let sender = peer("127.0.0.1", 5000)
        let subscriber = try registry.subscribe(from: sender)
        #expect(subscriber == SubscriberRegistry.Subscriber(target: sender, owner: sender, feedback: .native, expiry: .seconds(90)))
        try registry.subscribe(from: sender, SubscriptionRequest(feedback: .normalized))
        #expect(registry.subscribers.map(\.feedback) == [.normalized])
    }

    @Test func theListIsBounded() throws {
        var registry = SubscriberRegistry()
        for port in 1...32 { try registry.subscribe(from: peer("127.0.0.1", UInt16(port))) }
        #expect(throws: SubscriptionError.full(capacity: 32)) { try registry.subscribe(from: peer("127.0.0.1", 33)) }
        #expect(SubscriptionError.full(capacity: 32).description
                == "subscriber limit reached (32); unsubscribe another client first")
        // Changing an existing subscription still works when full; a freed slot can be taken.
        try registry.subscribe(from: peer("127.0.0.1", 1), SubscriptionRequest(feedback: .both))
        try registry.unsubscribe(from: peer("127.0.0.1", 2))
        try registry.subscribe(from: peer("127.0.0.1", 33))
        #expect(registry.subscribers.count == 32)
    }

    @Test func noMessageCanRedirectAnotherClientsFeedback() throws {
        var registry = SubscriberRegistry()
        let owner = peer("10.0.0.1", 5000)
        let display = peer("10.0.0.9", 9000)
        try registry.subscribe(from: owner, url(display))

        let stranger = peer("10.0.0.2", 6000)
        let expected = SubscriptionError.anotherClients(url: "osc.udp://10.0.0.9:9000/")
        #expect(throws: expected) { try registry.subscribe(from: stranger, SubscriptionRequest(url: display, feedback: .both)) }
        #expect(throws: expected) { try registry.unsubscribe(from: stranger, url: display) }
        #expect(throws: SubscriptionError.notSubscribed(url: "osc.udp://10.0.0.2:6000/")) {
            try registry.unsubscribe(from: stranger)  // only ever its own
        }
        #expect(registry.subscribers.map(\.feedback) == [.native])
        #expect(expected.description == "osc.udp://10.0.0.9:9000/ was subscribed by another client; "
                + "only that client or a client on the subscriber's host can change it")

        // The subscriber's own host may change it (oscsend uses a new port for every message).
        let sameHost = peer("10.0.0.9", 40123)
        try registry.subscribe(from: sameHost, SubscriptionRequest(url: display, feedback: .normalized))
        #expect(registry.subscribers == [SubscriberRegistry.Subscriber(target: display, owner: owner, feedback: .normalized,
                                                                        expiry: .seconds(90))])
        let removed = try registry.unsubscribe(from: sameHost, url: display)
        #expect(removed.map(\.target) == [display])
        #expect(registry.subscribers.isEmpty)
    }

    @Test func unsubscribeWithoutURLRemovesTheSendersOwnAndTheOnesItMade() throws {
        var registry = SubscriberRegistry()
        let surface = peer("10.0.0.1", 5000)
        let other = peer("10.0.0.2", 5000)
        try registry.subscribe(from: surface)
        try registry.subscribe(from: surface, url(peer("10.0.0.1", 9000)))
        try registry.subscribe(from: other)
        let removed = try registry.unsubscribe(from: surface)
        #expect(removed.map(\.target) == [surface, peer("10.0.0.1", 9000)])
        #expect(registry.subscribers.map(\.target) == [other])
        #expect(throws: SubscriptionError.notSubscribed(url: "osc.udp://10.0.0.1:5000/")) {
            try registry.unsubscribe(from: surface)
        }
        #expect(throws: SubscriptionError.notSubscribed(url: "osc.udp://10.0.0.3:1/")) {
            try registry.unsubscribe(from: surface, url: peer("10.0.0.3", 1))
        }
        #expect(SubscriptionError.notSubscribed(url: "osc.udp://10.0.0.3:1/").description
                == "osc.udp://10.0.0.3:1/ is not subscribed")
    }

    @Test func feedbackGoesToEveryOtherSubscriberInItsForm() throws {
        var registry = SubscriberRegistry()
        let maker = peer("127.0.0.1", 5001)
        try registry.subscribe(from: maker)
        try registry.subscribe(from: peer("127.0.0.1", 5002))
        try registry.subscribe(from: peer("127.0.0.1", 5003), SubscriptionRequest(feedback: .normalized))
        try registry.subscribe(from: peer("127.0.0.1", 5004), SubscriptionRequest(feedback: .both))

        #expect(registry.enqueueFeedback(cutoff, value: .float(20000), origin: maker) == true)  // schedule a flush
        #expect(describe(registry.drain()) == [
            "127.0.0.1:5002 /filter/cutoff ,f float(20000.0)",
            "127.0.0.1:5003 /filter/cutoff/normalized ,f float(1.0)",
            "127.0.0.1:5004 /filter/cutoff ,f float(20000.0)",
            "127.0.0.1:5004 /filter/cutoff/normalized ,f float(1.0)",
        ])
        // A change no client made (a patch load) goes to everyone.
        registry.enqueueFeedback(q, value: .float(2), origin: nil)
        #expect(registry.drain().map(\.peer.port) == [5001, 5002, 5003, 5004, 5004])
    }

    @Test func noEchoToASurfaceThatReceivesOnAnotherPort() throws {
        var registry = SubscriberRegistry()
        let sendingPort = peer("192.168.1.20", 8000)
        try registry.subscribe(from: sendingPort, url(peer("192.168.1.20", 9000)))
        #expect(registry.enqueueFeedback(cutoff, value: .float(500), origin: sendingPort) == false)
        #expect(registry.drain().isEmpty)
        registry.enqueueFeedback(cutoff, value: .float(500), origin: peer("192.168.1.20", 8001))
        #expect(describe(registry.drain()) == ["192.168.1.20:9000 /filter/cutoff ,f float(500.0)"])
    }

    @Test func aFloodIsCoalescedToTheLatestValuePerAddress() throws {
        var registry = SubscriberRegistry()
        try registry.subscribe(from: peer("127.0.0.1", 5001))
        try registry.subscribe(from: peer("127.0.0.1", 5002), SubscriptionRequest(feedback: .both))
        var flushes = 0
        for index in 0..<10_000 {
            let scheduled = index.isMultiple(of: 2)
                ? registry.enqueueFeedback(cutoff, value: .float(Float(20 + index)), origin: nil)
                : registry.enqueueFeedback(q, value: .float(Float(index % 18) + 0.5), origin: nil)
            if scheduled { flushes += 1 }
        }
        #expect(flushes == 1)
        #expect(registry.pendingMessageCount == 2 + 4)  // subscribers × keys, not × changes
        #expect(describe(registry.drain()) == [
            "127.0.0.1:5001 /filter/cutoff ,f float(10018.0)",
            "127.0.0.1:5001 /filter/q ,f float(9.5)",
            "127.0.0.1:5002 /filter/cutoff ,f float(10018.0)",
            "127.0.0.1:5002 /filter/cutoff/normalized ,f float(\(FaderTaper.normalized(.float(10018), for: cutoff)))",
            "127.0.0.1:5002 /filter/q ,f float(9.5)",
            "127.0.0.1:5002 /filter/q/normalized ,f float(\(FaderTaper.normalized(.float(9.5), for: q)))",
        ])
        #expect(registry.pendingMessageCount == 0)
        #expect(registry.enqueueFeedback(q, value: .float(1), origin: nil) == true)  // next flush
    }

    @Test func terminalStatesAndNotificationsAreCoalescedPerAddress() throws {
        var registry = SubscriberRegistry()
        let maker = peer("127.0.0.1", 5001)
        try registry.subscribe(from: maker)
        try registry.subscribe(from: peer("127.0.0.1", 5002))
        registry.enqueueTerminalState(address: "/filter/cutoff", state: "superseded", value: .float(400), origin: maker)
        registry.enqueueFeedback(cutoff, value: .float(500), origin: maker)
        registry.enqueueTerminalState(address: "/filter/cutoff", state: "applied", value: .float(500), origin: maker)
        registry.enqueueTerminalState(address: "/filter/q", state: "failed", value: .float(2), error: "timed out",
                                      origin: maker)
        registry.enqueueNotification(OSCMessage("/session", [.string("active"), .string("fine_tuning"), .int32(4)]), origin: nil)
        registry.enqueueNotification(OSCMessage("/session", [.string("inactive")]), origin: nil)
        #expect(describe(registry.drain()) == [
            "127.0.0.1:5001 /session ,s string(\"inactive\")",
            "127.0.0.1:5002 /state ,ssf string(\"/filter/cutoff\") string(\"applied\") float(500.0)",
            "127.0.0.1:5002 /filter/cutoff ,f float(500.0)",
            "127.0.0.1:5002 /state ,ssfs string(\"/filter/q\") string(\"failed\") float(2.0) string(\"timed out\")",
            "127.0.0.1:5002 /session ,s string(\"inactive\")",
        ])
    }

    @Test func aSubscriberWhoseSendsKeepFailingIsDropped() throws {
        var registry = SubscriberRegistry(maximumConsecutiveFailures: 3)
        let gone = peer("127.0.0.1", 5001)
        try registry.subscribe(from: gone)
        try registry.subscribe(from: peer("127.0.0.1", 5002))
        #expect(registry.recordSend(to: gone, succeeded: false) == nil)
        #expect(registry.recordSend(to: gone, succeeded: false) == nil)
        #expect(registry.recordSend(to: gone, succeeded: true) == nil)  // not in a row
        #expect(registry.subscriber(at: gone)?.consecutiveFailures == 0)
        registry.enqueueFeedback(cutoff, value: .float(100), origin: nil)
        #expect(registry.recordSend(to: gone, succeeded: false) == nil)
        #expect(registry.recordSend(to: gone, succeeded: false) == nil)
        #expect(registry.recordSend(to: gone, succeeded: false)?.target == gone)
        #expect(registry.subscribers.map(\.target.port) == [5002])
        #expect(registry.drain().map(\.peer.port) == [5002])  // its pending feedback went with it
        #expect(registry.recordSend(to: gone, succeeded: false) == nil)
    }

    @Test func theSnapshotBringsASubscriberInSync() {
        let values: [(ParameterDescriptor, ParameterValue)] = [
            (EngineSlot.filterEnabled.descriptor, .bool(true)), (cutoff, .float(20)),
        ]
        #expect(SubscriberRegistry.snapshot(values, feedback: .native)
                == [OSCMessage("/filter/enabled", [.int32(1)]), OSCMessage("/filter/cutoff", [.float(20)])])
        #expect(SubscriberRegistry.snapshot(values, feedback: .normalized)
                == [OSCMessage("/filter/enabled/normalized", [.float(1)]), OSCMessage("/filter/cutoff/normalized", [.float(0)])])
        #expect(SubscriberRegistry.snapshot(values, feedback: .both).map(\.address)
                == ["/filter/enabled", "/filter/enabled/normalized", "/filter/cutoff", "/filter/cutoff/normalized"])
    }
}

@Suite struct SharedSubscriberRegistryTests {
    @Test func flushSendsOutsideTheLockAndDropsFailingSubscribers() throws {
        let shared = SharedSubscriberRegistry(SubscriberRegistry(maximumConsecutiveFailures: 2))
        let alive = OSCPeer(host: "127.0.0.1", port: 5001)!
        let dead = OSCPeer(host: "127.0.0.1", port: 5002)!
        try shared.subscribe(from: alive)
        try shared.subscribe(from: dead)
        let cutoff = EngineSlot.filterCutoff.descriptor

        var sent: [String] = []
        for value: Float in [100, 200] {
            #expect(shared.enqueueFeedback(cutoff, value: .float(value), origin: nil))
            let dropped = shared.flush { peer, message in
                // The registry is usable while sending: the lock is not held.
                _ = shared.subscribers
                sent.append("\(peer.port) \(message)")
                return peer != dead
            }
            #expect(dropped.map(\.target) == (value == 200 ? [dead] : []))
        }
        #expect(sent == ["5001 /filter/cutoff ,f float(100.0)", "5002 /filter/cutoff ,f float(100.0)",
                         "5001 /filter/cutoff ,f float(200.0)", "5002 /filter/cutoff ,f float(200.0)"])
        #expect(shared.subscribers.map(\.target) == [alive])
        #expect(throws: SubscriptionError.notSubscribed(url: dead.oscURL)) { try shared.unsubscribe(from: dead) }
    }
}
