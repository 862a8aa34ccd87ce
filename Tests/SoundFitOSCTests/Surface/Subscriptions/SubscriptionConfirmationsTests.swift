import OSCCore
import SoundFitOSC
import Testing

/// Third-party subscriptions wait for their target's confirmation, bounded and expiring;
/// subscriptions have leases and a per-owner cap.
@Suite struct SubscriptionConfirmationsTests {
    private func peer(_ host: String, _ port: UInt16) -> OSCPeer { OSCPeer(host: host, port: port)! }
    private let owner = OSCPeer(host: "10.0.0.1", port: 5000)!

    @Test func oneChallengePerTargetAndConfirmationFromItsHost() throws {
        var confirmations = SubscriptionConfirmations()
        let target = peer("10.0.0.9", 9000)
        guard case .challenge(let pending) = try confirmations.request(target, owner: owner, feedback: .both,
                                                                         token: "t1", at: .zero) else {
            Issue.record("no challenge")
            return
        }
        #expect(pending.challengeMessage == OSCMessage("/subscribe/challenge", [.string("t1")]))
        #expect(pending.pendingMessage(at: .seconds(10))
                == OSCMessage("/subscribe/pending", [.string("osc.udp://10.0.0.9:9000/"), .string("both"), .int32(20)]))
        // Repeating sends nothing more.
        #expect(try confirmations.request(target, owner: owner, feedback: .both, token: "t2", at: .seconds(5))
                == .alreadyPending(pending))
        #expect(throws: SubscriptionError.unknownToken) { try confirmations.confirm("t2", from: target, at: .seconds(6)) }
        #expect(throws: SubscriptionError.confirmationFromAnotherHost(url: "osc.udp://10.0.0.9:9000/")) {
            try confirmations.confirm("t1", from: self.peer("10.0.0.8", 9000), at: .seconds(6))
        }
        // Any port of the target's host may confirm.
        #expect(try confirmations.confirm("t1", from: peer("10.0.0.9", 40000), at: .seconds(6)) == pending)
        #expect(confirmations.pending.isEmpty)
        #expect(throws: SubscriptionError.unknownToken) { try confirmations.confirm("t1", from: target, at: .seconds(6)) }
    }

    @Test func boundedRateLimitedAndExpiring() throws {
        var confirmations = SubscriptionConfirmations()
        // One challenge per target host per second.
        _ = try confirmations.request(peer("10.0.1.1", 1), owner: owner, feedback: .native, token: "a", at: .zero)
        #expect(throws: SubscriptionError.confirmationTooSoon(host: "10.0.1.1", interval: .seconds(1))) {
            try confirmations.request(self.peer("10.0.1.1", 2), owner: self.owner, feedback: .native, token: "b", at: .milliseconds(500))
        }
        _ = try confirmations.request(peer("10.0.1.1", 2), owner: owner, feedback: .native, token: "b", at: .seconds(1))
        // Four per owner, sixteen in all.
        _ = try confirmations.request(peer("10.0.1.2", 1), owner: owner, feedback: .native, token: "c", at: .seconds(1))
        _ = try confirmations.request(peer("10.0.1.3", 1), owner: owner, feedback: .native, token: "d", at: .seconds(1))
        #expect(throws: SubscriptionError.confirmationsFull(limit: 4)) {
            try confirmations.request(self.peer("10.0.1.4", 1), owner: self.owner, feedback: .native, token: "e", at: .seconds(1))
        }
        for index in 0..<12 {
            _ = try confirmations.request(peer("10.0.2.\(index)", 1), owner: peer("10.0.3.\(index)", 1), feedback: .native,
                                          token: "o\(index)", at: .seconds(2))
        }
        #expect(throws: SubscriptionError.confirmationsFull(limit: 16)) {
            try confirmations.request(self.peer("10.0.4.1", 1), owner: self.peer("10.0.5.1", 1), feedback: .native,
                                      token: "x", at: .seconds(2))
        }
        // They expire after 30 s.
        #expect(confirmations.expire(at: .seconds(30)).map(\.token) == ["a"])
        #expect(confirmations.expire(at: .seconds(32)).count == 15)
        #expect(throws: SubscriptionError.unknownToken) { try confirmations.confirm("b", from: self.peer("10.0.1.1", 2), at: .seconds(32)) }
    }

    @Test func tokensAreRandom128BitHex() {
        let tokens = Set((0..<1000).map { _ in SubscriptionConfirmations.makeToken() })
        #expect(tokens.count == 1000)
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func leasesEndUnlessRenewedAndNoOwnerTakesEverySlot() throws {
        var registry = SubscriberRegistry(lease: .seconds(10))
        let surface = peer("10.0.0.2", 5000)
        let subscriber = try registry.subscribe(from: surface, at: .seconds(1))
        #expect(subscriber.expiry == .seconds(11))
        #expect(subscriber.lease == .seconds(10))
        try registry.subscribe(from: owner, at: .seconds(1))
        try registry.subscribe(from: surface, at: .seconds(8))  // renewed
        #expect(registry.expire(at: .seconds(11)).map(\.target) == [owner])
        #expect(registry.subscribers.map(\.target) == [surface])
        #expect(registry.expire(at: .seconds(18)).map(\.target) == [surface])

        for port in 1...8 { try registry.subscribe(from: owner, SubscriptionRequest(url: peer("10.0.0.1", UInt16(port)))) }
        #expect(throws: SubscriptionError.ownerFull(limit: 8)) {
            try registry.subscribe(from: self.owner, SubscriptionRequest(url: self.peer("10.0.0.1", 9)))
        }
        // Renewing one of its own still works; another client still has room.
        try registry.subscribe(from: owner, SubscriptionRequest(url: peer("10.0.0.1", 1)))
        try registry.subscribe(from: surface)
        #expect(registry.drop(peer("10.0.0.1", 3))?.owner == owner)
        #expect(registry.drop(peer("10.0.0.1", 3)) == nil)
        try registry.subscribe(from: owner, SubscriptionRequest(url: peer("10.0.0.1", 9)))
    }
}
