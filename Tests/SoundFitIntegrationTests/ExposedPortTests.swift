import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// A control port that can be exposed. Third-party subscriptions are
    /// confirmed by their target, what a source address can draw is budgeted on an exposed port,
    /// subscriptions have leases and dead targets are dropped, no client takes every slot, and a
    /// flood of distinct sources leaves memory flat. Bytes and states are measured on real
    /// sockets; 127.0.0.x addresses stand for other hosts.
    @Suite("Exposed control port") struct ExposedControlPort {
        /// Sends `/subscribe arguments` and returns the first `/subscribed`, `/subscribe/pending` or `/error`.
        private func subscribe(_ client: OSCTestClient, _ arguments: [OSCValue] = []) throws -> OSCTestMessage {
            client.sendRaw(OSCWire.encode(OSCTestMessage("/subscribe", arguments)))
            return try client.waitFor("/subscribe answer") {
                ["/subscribed", "/subscribe/pending", "/error"].contains($0.address)
            }.match
        }

        @Test("A third-party /subscribe sends its target one challenge (≤ 3× the request) and nothing else until the target confirms")
        func thirdPartyConfirmation() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let requester = rig.osc
            let target = try OSCTestClient(port: rig.ready.oscPort, localAddress: loopbackAddress(2))
            let request = OSCWire.encode(OSCTestMessage("/subscribe", [.string(target.url)]))

            requester.sendRaw(request)
            let pending = try requester.waitFor("/subscribe/pending") { $0.address == "/subscribe/pending" || $0.address == "/error" }.match
            #expect(pending.address == "/subscribe/pending" && pending.string(0) == target.url && pending.string(1) == "native"
                    && pending.number(2) == 30, "\(pending)")
            // Repeating it, and a change the target would get as feedback if it were subscribed.
            for _ in 0..<10 { requester.sendRaw(request) }
            let repeats = try requester.sync().filter { $0.address == "/subscribe/pending" }  // all answered before /synced
            #expect(repeats.count == 10, "every repeat is answered /subscribe/pending: \(repeats.count)")
            expectApplied(try requester.set("/filter/cutoff", .float(2000)), "/filter/cutoff", .float(2000))
            // The challenge is in the target's socket already (sent before the requester's
            // /subscribe/pending); /synced follows the change's terminal /state to every
            // subscriber, so the target would hold that feedback now had it been subscribed.
            try requester.sync()
            let beforeConfirmation = target.collect(for: .zero)
            let bytes = OSCTestClient.wireBytes(beforeConfirmation)
            report("bytes at a third-party target per /subscribe byte, 11 requests", Double(bytes) / Double(request.count), unit: "x")
            #expect(beforeConfirmation.map(\.address) == ["/subscribe/challenge"], "\(beforeConfirmation)")
            #expect(bytes <= 3 * request.count, "\(bytes) bytes for a \(request.count)-byte /subscribe")
            let token = try #require(beforeConfirmation.first?.string(0))
            #expect(token.count == 32 && token.allSatisfy(\.isHexDigit), "\(token)")
            let status = try requester.status()
            #expect(status["subscribers"]?.number == 0 && status["pending_confirmations"]?.number == 1, "\(status)")

            // A wrong token, or the right one from another host, confirms nothing.
            expectErrorReply(try target.ask("/subscribe/confirm", [.string(String(repeating: "0", count: 32))], reply: "/subscribed"),
                             for: "/subscribe/confirm", hint: "token")
            let stranger = try OSCTestClient(port: rig.ready.oscPort, localAddress: loopbackAddress(3))
            expectErrorReply(try stranger.ask("/subscribe/confirm", [.string(token)], reply: "/subscribed"),
                             for: "/subscribe/confirm", hint: "its host")
            // A confirmation would send /subscribed and the snapshot to the target while it is
            // handled, before the stranger's answer; SoundFit sends them from the socket that
            // answers the target's /sync, so they would come before /synced.
            let afterRefusals = try target.sync()
            #expect(afterRefusals.isEmpty, "\(afterRefusals)")

            // The target confirms: /subscribed with the lease, the snapshot, then feedback.
            target.send("/subscribe/confirm", .string(token))
            let subscribed = try target.waitFor("/subscribed") { $0.address == "/subscribed" || $0.address == "/error" }.match
            #expect(subscribed.arguments == [.string(target.url), .string("native"), .int(90)], "\(subscribed)")
            let snapshot = try target.sync()  // sent with the answer to its /subscribe/confirm: before /synced
            #expect(snapshot.contains { $0.address == "/filter/cutoff" && $0.arguments == [.float(2000)] }, "\(snapshot.prefix(4))")
            // (Changes of the requester, the subscription's owner, are not echoed to it; another client's are.)
            _ = try stranger.setWithID("/filter/cutoff", .float(3000), id: 2)
            _ = try target.waitFor("feedback after confirmation") { $0.address == "/filter/cutoff" && $0.arguments == [.float(3000)] }
            expectErrorReply(try target.ask("/subscribe/confirm", [.string(token)], reply: "/subscribed"), for: "/subscribe/confirm",
                             hint: "token")

            // The requester renews it: /subscribed to the requester, nothing more to the target.
            // First a marker: once its feedback is in, the late feedback of the above is too.
            _ = try stranger.setWithID("/filter/q", .float(2), id: 3)
            try target.waitForChangeFeedback("/filter/q", .float(2))
            let renewed = try requester.ask("/subscribe", [.string(target.url)], reply: "/subscribed")
            #expect(renewed.arguments == [.string(target.url), .string("native"), .int(90)], "\(renewed)")
            // A renewal would send the target /subscribed and a snapshot while it is handled,
            // before the requester's answer, so before the target's /synced (see above).
            let afterRenewal = try target.sync()
            #expect(afterRenewal.isEmpty, "a renewal re-sent something to the target: \(afterRenewal)")

            // A same-host URL (oscdump on another port) is challenged too: nothing but the
            // challenge until its host confirms, from any port (oscsend sends from a new one).
            let dump = try OSCTestClient(port: rig.ready.oscPort)
            requester.send("/subscribe", .string(dump.url))
            let challenge = try dump.waitFor("/subscribe/challenge at a same-host URL") { $0.address == "/subscribe/challenge" }
            #expect(challenge.before.isEmpty, "\(challenge.before)")
            // Whatever the /subscribe sends its URL is sent while it is handled: once the
            // requester's /synced is in, all of it came before the URL's own /synced.
            try requester.sync()
            let afterChallenge = try dump.sync()
            #expect(afterChallenge.isEmpty, "a same-host URL got more than its challenge: \(afterChallenge)")
            let confirmer = try OSCTestClient(port: rig.ready.oscPort)
            confirmer.send("/subscribe/confirm", .string(challenge.match.string(0) ?? ""))
            _ = try dump.waitFor("/subscribed at a same-host URL") { $0.address == "/subscribed" }
        }

        @Test("--osc-allow: a /subscribe of a URL outside the list is refused")
        func subscriptionOutsideTheAllowList() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-allow", "127.0.0.1/32"])) { rig in
                let osc = try OSCTestClient(port: try rig.soundfit.waitForReady().oscPort)
                try osc.ping()
                let outside = try OSCTestClient(port: osc.serverPort, localAddress: loopbackAddress(2))
                expectErrorReply(try subscribe(osc, [.string(outside.url)]), for: "/subscribe", hint: "--osc-allow")
                // A challenge would be sent while the /subscribe is handled: before osc's /synced.
                #expect(try outside.received(bySyncOf: osc).isEmpty)
                #expect(try subscribe(osc).address == "/subscribed")
            }
        }

        @Test("32 subscribers whose ports close are dropped within seconds (ICMP port unreachable); no client holds more than 8")
        func deadTargetsFreeTheirSlots() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let owners = try (0..<4).map { _ in try OSCTestClient(port: rig.ready.oscPort) }
                var sinks: [OSCTestClient] = []
                for owner in owners {
                    for _ in 0..<8 {
                        let sink = try OSCTestClient(port: rig.ready.oscPort)
                        sinks.append(sink)
                        owner.send("/subscribe", .string(sink.url))
                        try sink.confirmSubscription()
                        _ = try sink.waitFor("/subscribed") { $0.address == "/subscribed" }
                    }
                    if owner === owners[0] {
                        try owner.sync()  // its eight /subscribe/pending
                        let ninth = try OSCTestClient(port: rig.ready.oscPort)
                        expectErrorReply(try subscribe(owner, [.string(ninth.url)]), for: "/subscribe", hint: "holds 8")
                    }
                }
                #expect(try rig.osc.status()["subscribers"]?.number == 32)
                let newcomer = try OSCTestClient(port: rig.ready.oscPort)
                expectErrorReply(try subscribe(newcomer), for: "/subscribe", hint: "limit")

                // Every subscriber's port closes; the next feedback finds them gone.
                sinks.removeAll()
                let start = ContinuousClock.now
                _ = try rig.osc.setWithID("/filter/q", .float(2), id: 1)
                _ = try rig.osc.waitForStatus(timeout: .seconds(60)) { $0["subscribers"]?.number == 0 }
                let took = ContinuousClock.now - start
                report("32 dead subscribers dropped after", Double(took.components.attoseconds) / 1e18 + Double(took.components.seconds), unit: "s")
                #expect(took < .seconds(10))
                #expect(try subscribe(newcomer).address == "/subscribed")
            }
        }

        @Test("Leases: /subscribed says the lease; a renewed subscription stays, one not renewed is dropped")
        func leases() throws {
            try Rig.run(.process(channels: 1, arguments: ["--subscription-lease", "2"])) { rig in
                let renewing = try OSCTestClient(port: rig.ready.oscPort)
                let idle = try OSCTestClient(port: rig.ready.oscPort)
                #expect(try subscribe(renewing).arguments.last == .int(2))
                #expect(try subscribe(idle).arguments.last == .int(2))
                for _ in 0..<4 {
                    Thread.sleep(forTimeInterval: 1)  // the lease's passing is the measured behaviour: no event
                    renewing.send("/subscribe")
                }
                #expect(try rig.osc.status()["subscribers"]?.number == 1, "the idle subscription outlived its lease")
                try renewing.sync()  // the renewals' snapshots were sent with their answers: before /synced
                try idle.sync()  // its snapshot, sent with its /subscribed: before /synced
                _ = try rig.osc.setWithID("/output/gain", .float(-6), id: 1)
                _ = try renewing.waitFor("feedback to the renewed subscription") { $0.address == "/output/gain" }
                // /synced follows the change's terminal /state to every subscriber: the idle client
                // would hold it now had its subscription outlived the lease.
                try rig.osc.sync()
                #expect(idle.collect(for: .zero).isEmpty, "feedback after the lease ended")
                _ = try rig.osc.waitForStatus(timeout: .seconds(10)) { $0["subscribers"]?.number == 0 }
                #expect(try rig.osc.status()["subscribers"]?.number == 0)
            }
        }

        @Test("Exposed port: each source address draws at most its budget; amplification of /list, /status, /patch/list, /subscribe")
        func perSourceBudget() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-host", "0.0.0.0", "--name", "soundfit-exposed"])) { rig in
                let loopback = try SoundFitProcess(arguments: [
                    "--server", rig.server.name, "--no-start-server", "--channels", "1", "--name", "soundfit-loopback",
                ])
                defer { loopback.stop() }
                let port = try rig.soundfit.oscEndpoint().port
                let loopbackPort = try loopback.waitForReady().oscPort
                #expect(rig.soundfit.process.standardError.contains("budgeted per source"), "no warning about the exposed port")

                // 500 user patches, saved by an administrator (its own budget).
                let admin = try OSCTestClient(port: port)
                try admin.ping()
                for index in 0..<500 {
                    let saved = try admin.ask("/patch/save", [.string("user \(index)")], reply: "/patch/saved")
                    #expect(saved.address == "/patch/saved", "\(saved)")
                    if saved.address != "/patch/saved" { break }
                }

                // One request each, from 127.0.0.2: what a source address that confirmed it receives
                // there draws (an unconfirmed one gets at most 3× its request: OSCAbuseTests).
                let victim = try OSCTestClient(port: port, localAddress: loopbackAddress(2))
                try victim.confirmSource()
                func factor(_ message: OSCTestMessage, until last: String) throws -> Double {
                    victim.sendRaw(OSCWire.encode(message))
                    let answer = try victim.waitFor(last) { $0.address == last }
                    return Double(OSCTestClient.wireBytes(answer.before + [answer.match])) / Double(OSCWire.encode(message).count)
                }
                report("amplification /list", try factor(OSCTestMessage("/list"), until: "/list/end"), unit: "x")
                report("amplification /status", try factor(OSCTestMessage("/status"), until: "/status"), unit: "x")
                let page = try factor(OSCTestMessage("/patch/list"), until: "/patch/end")
                report("amplification /patch/list (one page of 32, 500 user patches)", page, unit: "x")
                #expect(page < 100, "a /patch/list page answered \(page)× its bytes")
                let third = try OSCTestClient(port: port, localAddress: loopbackAddress(3))
                let subscribeRequest = OSCWire.encode(OSCTestMessage("/subscribe", [.string(third.url)]))
                for _ in 0..<5 { victim.sendRaw(subscribeRequest) }
                // A challenge is sent while its /subscribe is handled: once the victim's requests
                // ended (/synced), every one is in the third party's socket.
                _ = try victim.sync()
                let atThirdParty = OSCTestClient.wireBytes(third.collect(for: .zero))
                report("amplification third-party /subscribe ×5, at the third party", Double(atThirdParty) / Double(5 * subscribeRequest.count), unit: "x")
                #expect(atThirdParty <= 3 * subscribeRequest.count)

                // A flood of /list from one address: on loopback all answered, exposed bounded by
                // the budget (64 KiB burst + 16 KiB/s).
                let list = OSCWire.encode(OSCTestMessage("/list"))
                func flood(_ client: OSCTestClient, witness: OSCTestClient) throws -> (bytesIn: Int, bytesOut: Int, seconds: Double) {
                    let start = ContinuousClock.now
                    for index in 0..<400 {
                        client.sendRaw(list)
                        // Flow control: another client's /synced (one receive thread, arrival order)
                        // says these 50 were read, so none is lost in a full socket buffer.
                        if index % 50 == 49 { try witness.sync() }
                    }
                    // The budget refills with time: the window is part of the measured bound.
                    let received = client.collect(for: .seconds(2))
                    let elapsed = ContinuousClock.now - start
                    return (400 * list.count, OSCTestClient.wireBytes(received),
                            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                }
                let open = try flood(try OSCTestClient(port: loopbackPort), witness: try OSCTestClient(port: loopbackPort))
                report("flood of 400 /list on loopback: bytes out / bytes in", Double(open.bytesOut) / Double(open.bytesIn), unit: "x")
                let budgeted = try flood(victim, witness: admin)
                report("flood of 400 /list on an exposed port from one address: bytes out / bytes in",
                       Double(budgeted.bytesOut) / Double(budgeted.bytesIn), unit: "x")
                #expect(Double(budgeted.bytesOut) <= 64 * 1024 + 16 * 1024 * budgeted.seconds + 2048,
                        "\(budgeted.bytesOut) bytes in \(budgeted.seconds) s")
                #expect(open.bytesOut > 4 * budgeted.bytesOut, "loopback \(open.bytesOut) vs exposed \(budgeted.bytesOut)")
                let dropped = try admin.status()["answers_dropped"]?.number ?? 0
                #expect(dropped > 0)
                #expect(rig.soundfit.process.standardError.contains("over its budget"), "no log line for the dropped answers")
                // The budget refills: the address is answered again a little later (within 5 s).
                let refilled = ContinuousClock.now + .seconds(5)
                while (try? victim.ping(timeout: .milliseconds(200))) == nil {
                    if ContinuousClock.now >= refilled { throw IntegrationError("the exposed port's budget did not refill within 5 s") }
                }
            }
        }

        @Test("A flood of 3 000 requests from distinct source addresses and ports leaves memory and every table bounded")
        func floodOfDistinctSources() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-host", "0.0.0.0"])) { rig in
                let port = try rig.soundfit.oscEndpoint().port
                let admin = try OSCTestClient.inSession(port: port)
                /// Client `index` sends a set, a self-subscription and a third-party subscription, then
                /// closes: every structure keyed by a client sees a new key.
                func burst(_ range: Range<Int>) throws {
                    for index in range {
                        let address = 0x7F01_0000 | UInt32(index / 250) << 8 | UInt32(index % 250 + 1)  // 127.1.x.y
                        let client = try OSCTestClient(port: port, localAddress: address)
                        client.send("/filter/cutoff", .float(Float(100 + index)), .int(Int32(index)))
                        client.send("/subscribe")
                        client.send("/subscribe", .string("osc.udp://127.2.\(index / 250).\(index % 250 + 1):9"))
                        client.send("/session/interrupt", .string("reason \(index)"))
                        // Flow control: the admin's `/synced` leaves after every packet sent before it
                        // was handled (one receive thread, arrival order), so the socket's buffer
                        // never overflows.
                        if index % 100 == 99 { try admin.sync(Int32(index)) }
                    }
                    // Every burst packet was handled before the admin's /pong (one receive thread,
                    // arrival order); their sets end before the admin's own set of the same
                    // parameter, requested after them, is applied.
                    try admin.ping(timeout: .seconds(30))
                    _ = try admin.set("/filter/cutoff", .float(1000), timeout: .seconds(30))
                }
                try burst(0..<300)
                let before = try ProcessMemory.residentKilobytes(rig.soundfit.process.pid)
                try burst(300..<3300)
                let after = try ProcessMemory.residentKilobytes(rig.soundfit.process.pid)
                report("RSS growth after 3 000 distinct sources", Double(after - before) / 1024, unit: "MiB")
                #expect(after - before < 8 * 1024, "memory grew by \(after - before) kB")
                let status = try admin.status()
                #expect((status["subscribers"]?.number ?? 99) <= 32 && (status["pending_confirmations"]?.number ?? 99) <= 16, "\(status)")
                #expect(rig.soundfit.process.isRunning)
            }
        }

        @Test("Forged sources between two instances: no answer of A is a request at B", .enabled(if: getuid() == 0))
        func forgedBetweenInstances() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let other = try SoundFitProcess(arguments: ["--server", rig.server.name, "--no-start-server", "--channels", "1",
                                                             "--name", "soundfit-b"])
                defer { other.stop() }
                let otherPort = try other.waitForReady().oscPort
                let b = try OSCTestClient(port: otherPort)
                try b.waitForSession()
                // B's settings differ from A's defaults (timeout 10 s, 100 dB SPL, continuous).
                #expect(try b.ask("/config/timeout", [.float(3)], reply: "/config/timeout").number(0) == 3)
                #expect(try b.ask("/config/max_output", [.float(90)], reply: "/config/max_output").number(0) == 90)
                #expect(try b.ask("/config/delivery", [.string("discrete"), .float(0.1)], reply: "/config/delivery").string(0) == "discrete")
                // Every command A answers, "from" B's port: A's answers go to B.
                let forged: [OSCTestMessage] = [
                    OSCTestMessage("/ping", [.int(1)]), OSCTestMessage("/list"), OSCTestMessage("/status"), OSCTestMessage("/session"),
                    OSCTestMessage("/config/delivery"), OSCTestMessage("/config/timeout"), OSCTestMessage("/config/max_output"),
                    OSCTestMessage("/patch/list"), OSCTestMessage("/patch/current"), OSCTestMessage("/state", [.string("/filter/q")]),
                    OSCTestMessage("/session/interrupt", [.string("forged")]), OSCTestMessage("/session/resolve", [.string("forged")]),
                    OSCTestMessage("/unsubscribe"), OSCTestMessage("/subscribe/confirm", [.string("x")]),
                    OSCTestMessage("/profile/audiogram", [.string("x")]), OSCTestMessage("/no/such/address"),
                    OSCTestMessage("/config/timeout", [.float(2)]),
                ]
                for message in forged {
                    try sendForged(OSCWire.encode(message), fromPort: otherPort, toPort: rig.ready.oscPort)
                }
                let (first, second) = try cpuSeconds(of: rig.soundfit.process.pid, and: other.process.pid, over: .seconds(2))
                report("CPU over 2 s of A after forged requests from B's port", first, unit: "s")
                report("CPU over 2 s of B", second, unit: "s")
                #expect(first < 0.6 && second < 0.6, "an instance is busy (\(first) s, \(second) s of CPU in 2 s): a loop?")
                #expect(try b.ask("/config/timeout", reply: "/config/timeout").number(0) == 3, "A's answer set B's timeout")
                #expect(try b.ask("/config/max_output", reply: "/config/max_output").number(0) == 90, "A's answer set B's limit")
                let delivery = try b.ask("/config/delivery", reply: "/config/delivery")
                #expect(delivery.string(0) == "discrete" && isClose(delivery.arguments[1], 0.1, tolerance: 1e-4), "\(delivery)")
                #expect(try rig.osc.ask("/config/timeout", reply: "/config/timeout").number(0) == 2, "the control forgery did not arrive")
            }
        }
    }
}
