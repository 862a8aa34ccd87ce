import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// `/subscribe` and `/unsubscribe`, snapshots, feedback to other clients only,
    /// feedback forms, and who may change a subscription.
    @Suite("OSC subscriptions") struct OSCSubscriptions {
        /// Every listed parameter address and its current value (queried).
        private func currentValues(_ osc: OSCTestClient) throws -> [String: OSCValue] {
            osc.send("/list")
            let end = try osc.waitFor("/list/end") { $0.address == "/list/end" }
            var values: [String: OSCValue] = [:]
            for address in end.before.filter({ $0.address == "/list/param" }).compactMap({ $0.string(0) }) {
                osc.send(address)
                let reply = try osc.waitFor("query \(address)") {
                    ($0.address == address && $0.arguments.count == 1) || $0.address == "/error"
                }.match
                if reply.address == address { values[address] = reply.arguments[0] }
            }
            return values
        }

        /// Sends `/subscribe arguments` and returns the `/subscribed` reply (or the `/error`).
        private func subscribe(_ client: OSCTestClient, _ arguments: [OSCValue] = []) throws -> OSCTestMessage {
            try client.ask("/subscribe", arguments, reply: "/subscribed")
        }

        /// Value feedback messages (`<address> <value>`, one argument) among `messages`.
        private func feedback(_ messages: [OSCTestMessage], _ address: String) -> [OSCTestMessage] {
            messages.filter { $0.address == address && $0.arguments.count == 1 }
        }

        @Test("/subscribe: snapshot, feedback and terminal states for other clients' changes, no echo to the maker, session changes, /unsubscribe")
        func feedbackToOthersOnly() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let maker = rig.osc
            let values = try currentValues(maker)
            #expect(values.count >= 14, "\(values)")

            let watcher = try OSCTestClient(port: rig.ready.oscPort)
            let subscribed = try subscribe(watcher)
            #expect(subscribed.address == "/subscribed", "\(subscribed)")
            #expect(subscribed.string(0).map { $0.hasPrefix("osc.udp://127.0.0.1:\(watcher.localPort)") } == true, "\(subscribed)")
            #expect(subscribed.string(1) == "native", "\(subscribed)")
            // The snapshot: every parameter's current value on its own address, once. It is sent
            // with the answer to /subscribe, so all of it arrives before /synced.
            let snapshot = try watcher.sync()
            for (address, value) in values {
                let messages = feedback(snapshot, address)
                #expect(messages.count == 1 && messages.first?.arguments[0] == value,
                        "snapshot for \(address): \(messages) (current value \(value))")
            }
            #expect(!snapshot.contains { $0.address.hasSuffix("/normalized") }, "native subscription got normalized values")

            // The maker subscribes too: it must still get no echo of its own changes.
            #expect(try subscribe(maker).address == "/subscribed")
            try maker.sync()  // sent with the answer to /subscribe: before /synced

            let reports = try maker.setWithID("/filter/cutoff", .float(3000), id: 9)
            #expect(reports.last?.string(1) == "applied" && reports.last?.requestID == 9, "\(reports)")
            // The value feedback and the terminal state, in either order.
            var seenByWatcher: [OSCTestMessage] = []
            func seen(_ predicate: (OSCTestMessage) -> Bool) -> Bool { seenByWatcher.contains(where: predicate) }
            let isValue: (OSCTestMessage) -> Bool = { $0.address == "/filter/cutoff" && $0.arguments == [.float(3000)] }
            let isTerminal: (OSCTestMessage) -> Bool = { $0.isTerminalState && $0.string(0) == "/filter/cutoff" }
            let deadline = ContinuousClock.now + .seconds(5)
            while !(seen(isValue) && seen(isTerminal)) && ContinuousClock.now < deadline {
                seenByWatcher += watcher.collect(for: .milliseconds(20))  // polls until both arrived (with a deadline)
            }
            #expect(seen(isValue), "no feedback /filter/cutoff 3000 for the subscriber: \(seenByWatcher)")
            let watcherState = seenByWatcher.first(where: isTerminal)
            #expect(watcherState?.arguments == [.string("/filter/cutoff"), .string("applied"), .float(3000)],
                    "subscribers get the terminal state without request id: \(String(describing: watcherState))")
            #expect(!seen { $0.address == "/state" && !$0.isTerminalState },
                    "subscribers get terminal states only: \(seenByWatcher)")

            // And the other way round. The watcher's change is also the maker's marker: an echo
            // of its own change, queued before, would arrive before this feedback.
            let watcherReports = try watcher.setWithID("/output/gain", .float(-3), id: 10)
            #expect(watcherReports.last?.string(1) == "applied", "\(watcherReports)")
            let makerLater = try maker.waitForChangeFeedback("/output/gain", .float(-3))
            #expect(feedback(reports + makerLater, "/filter/cutoff").isEmpty,
                    "the client that made the change got its value echoed: \(makerLater)")
            #expect(makerLater.filter { $0.isTerminalState }.isEmpty,
                    "the maker got a second terminal state for its own change: \(makerLater)")

            // Session changes reach subscribers. The session's feedback is the watcher's marker:
            // an echo of its own gain change, queued before, would arrive before it.
            let inactive = try maker.ask("/session/deactivate", reply: "/session")
            #expect(inactive.arguments == [.string("inactive")])
            let sessionWait = try watcher.waitFor("/session inactive for subscribers") { $0.address == "/session" }
            #expect(feedback(sessionWait.before, "/output/gain").isEmpty,
                    "the client that made the change got its value echoed: \(sessionWait.before)")
            let sessionFeedback = sessionWait.match
            #expect(sessionFeedback.arguments == [.string("inactive")], "\(sessionFeedback)")
            _ = try maker.ask("/session/activate", [.string("fine_tuning"), .int(3)], reply: "/session")
            let active = try watcher.waitFor("/session active for subscribers") { $0.address == "/session" }.match
            #expect(active.arguments == [.string("active"), .string("fine_tuning"), .int(3)], "\(active)")
            // Interruptions too ("subscribers get the same", the command catalog).
            _ = try maker.ask("/session/interrupt", [.string("call")], reply: "/session/interrupted")
            let interrupted = try? watcher.waitFor("/session/interrupted for subscribers", timeout: .seconds(2)) {
                $0.address == "/session/interrupted"
            }.match
            #expect(interrupted?.arguments == [.int(1)], "subscribers did not get /session/interrupted 1")
            _ = try maker.ask("/session/resolve", [.string("call")], reply: "/session/interrupted")
            let resolved = try? watcher.waitFor("/session/interrupted 0 for subscribers", timeout: .seconds(2)) {
                $0.address == "/session/interrupted"
            }.match
            #expect(resolved?.arguments == [.int(0)], "subscribers did not get /session/interrupted 0")
            // A marker: once its feedback is in, nothing older is queued for the watcher.
            expectApplied(try maker.set("/output/gain", .float(-4)), "/output/gain", .float(-4))
            try watcher.waitForChangeFeedback("/output/gain", .float(-4))

            // What the absence check below relies on: /synced follows the feedback of the maker's
            // change, so the watcher holds the terminal /state by then.
            expectApplied(try maker.set("/output/gain", .float(-5)), "/output/gain", .float(-5))
            try maker.sync()
            let atOnce = watcher.collect(for: .zero)
            #expect(atOnce.contains { $0.address == "/state" && $0.string(0) == "/output/gain" && $0.string(1) == "applied" },
                    "the watcher's feedback was not in before the maker's /synced: \(atOnce)")

            // Unsubscribed: no more feedback.
            let unsubscribed = try watcher.ask("/unsubscribe", reply: "/unsubscribed")
            #expect(unsubscribed.address == "/unsubscribed"
                    && unsubscribed.string(0).map { $0.hasPrefix("osc.udp://127.0.0.1:\(watcher.localPort)") } == true,
                    "\(unsubscribed)")
            let last = try maker.setWithID("/filter/cutoff", .float(4000), id: 11)
            #expect(last.last?.string(1) == "applied")
            // /synced follows the change's terminal /state to every subscriber: the watcher
            // would hold it now had it stayed subscribed.
            try maker.sync()
            let afterUnsubscribe = watcher.collect(for: .zero)
            #expect(afterUnsubscribe.isEmpty, "feedback after /unsubscribe: \(afterUnsubscribe)")
            expectErrorReply(try watcher.ask("/unsubscribe", reply: "/unsubscribed"), for: "/unsubscribe")
        }

        @Test("Feedback forms: normalized and both; a subscription for another URL; re-subscribing changes the form")
        func feedbackForms() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let maker = rig.osc
            let faders = try OSCTestClient(port: rig.ready.oscPort)
            let reply = try subscribe(faders, [.string("normalized")])
            #expect(reply.string(1) == "normalized", "\(reply)")
            let snapshot = try faders.sync()  // sent with the answer to /subscribe: before /synced
            let cutoffPosition = feedback(snapshot, "/filter/cutoff/normalized")
            #expect(cutoffPosition.count == 1 && isClose(cutoffPosition.first?.arguments[0], log(50) / log(1000), tolerance: 1e-4),
                    "normalized snapshot of /filter/cutoff (1000 Hz): \(cutoffPosition)")
            #expect(isClose(feedback(snapshot, "/output/gain/normalized").first?.arguments[0], 60.0 / 72.0, tolerance: 1e-4))
            #expect(feedback(snapshot, "/filter/cutoff").isEmpty, "normalized subscription got native values")

            // A client subscribes another URL (its own second socket) for both forms: once that
            // URL confirmed, `/subscribed` and the snapshot go to it.
            let sink = try OSCTestClient(port: rig.ready.oscPort)
            maker.send("/subscribe", .string(sink.url), .string("both"))
            try sink.confirmSubscription()
            let both = try sink.waitFor("/subscribed at the subscribed URL", timeout: .seconds(5)) { $0.address == "/subscribed" }.match
            #expect(both.string(0).map { $0.contains(":\(sink.localPort)") } == true && both.string(1) == "both", "\(both)")
            #expect(!(try maker.sync()).contains { $0.address == "/error" })  // an /error would come before /synced
            let sinkSnapshot = try sink.sync()  // sent with the answer to /subscribe/confirm: before /synced
            #expect(feedback(sinkSnapshot, "/filter/cutoff").count == 1 && feedback(sinkSnapshot, "/filter/cutoff/normalized").count == 1,
                    "a 'both' snapshot has both forms: \(sinkSnapshot.prefix(6))")

            let middle = Float((20.0 * 20000.0).squareRoot())
            let changer = try OSCTestClient(port: rig.ready.oscPort)
            let reports = try changer.setWithID("/filter/cutoff", .float(middle), id: 1)
            #expect(reports.last?.string(1) == "applied")
            let position = try faders.waitFor("/filter/cutoff/normalized feedback") { $0.address == "/filter/cutoff/normalized" }
            #expect(isClose(position.match.arguments.first, 0.5, tolerance: 1e-4), "\(position.match)")
            _ = try sink.waitFor("native feedback") { $0.address == "/filter/cutoff" && $0.arguments == [.float(middle)] }
            _ = try sink.waitFor("normalized feedback") {
                $0.address == "/filter/cutoff/normalized" && isClose($0.arguments.first, 0.5, tolerance: 1e-4)
            }
            // A marker: native feedback of the cutoff, queued before, would arrive before the
            // marker's feedback (see `waitForChangeFeedback`).
            _ = try changer.setWithID("/filter/q", .float(2), id: 3)
            let beforeMarker = try faders.waitForChangeFeedback("/filter/q", value: { $0.address == "/filter/q/normalized" })
            #expect(feedback(beforeMarker, "/filter/cutoff").isEmpty, "\(beforeMarker)")

            // Subscribing again changes the form (no second subscription).
            let native = try subscribe(faders, [.string("native")])
            #expect(native.string(1) == "native")
            try faders.sync()  // sent with the answer to /subscribe: before /synced
            _ = try changer.setWithID("/output/gain", .float(-12), id: 2)
            _ = try faders.waitFor("native /output/gain") { $0.address == "/output/gain" && $0.arguments == [.float(-12)] }
            // A marker: a second message for the gain, queued before, would arrive before it.
            _ = try changer.setWithID("/filter/q", .float(3), id: 4)
            let rest = try faders.waitForChangeFeedback("/filter/q", .float(3))
            #expect(feedback(rest, "/output/gain").isEmpty && feedback(rest, "/output/gain/normalized").isEmpty,
                    "one subscription, one native message: \(rest)")

            // The subscribing client may remove the URL it subscribed.
            let removed = try maker.ask("/unsubscribe", [.string(sink.url)], reply: "/unsubscribed")
            #expect(removed.address == "/unsubscribed" && removed.string(0).map { $0.contains(":\(sink.localPort)") } == true,
                    "\(removed)")
        }

        @Test("/subscribe ,s pattern: the snapshot and feedback follow only the selected parameters; session notifications still come")
        func subscriptionToASubtree() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let maker = rig.osc
            let watcher = try OSCTestClient(port: rig.ready.oscPort)
            let subscribed = try subscribe(watcher, [.string("/filter/{cutoff,q}")])
            #expect(subscribed.address == "/subscribed" && subscribed.string(3) == "/filter/{cutoff,q}", "\(subscribed)")
            let snapshot = try watcher.sync()  // sent with the answer to /subscribe: before /synced
            let values = snapshot.filter { $0.arguments.count == 1 && $0.address.hasPrefix("/") && $0.address != "/session" }
            #expect(Set(values.map(\.address)) == ["/filter/cutoff", "/filter/q"], "\(snapshot)")
            #expect(snapshot.contains { $0.address == "/session" }, "\(snapshot)")

            expectApplied(try maker.set("/output/gain", .float(-4)), "/output/gain", .float(-4))
            expectApplied(try maker.set("/filter/q", .float(2)), "/filter/q", .float(2))
            // The q's feedback is the marker: the gain's, queued before, would arrive before it.
            let fed = try watcher.waitForChangeFeedback("/filter/q", .float(2))
            #expect(!fed.contains { $0.address == "/output/gain" || $0.string(0) == "/output/gain" },
                    "fed a parameter outside the selection: \(fed)")
            _ = try maker.ask("/session/interrupt", [.string("call")], reply: "/session/interrupted")
            let notified = try watcher.waitFor("/session/interrupted") { $0.address == "/session/interrupted" }.match
            #expect(notified.arguments == [.int(1)], "\(notified)")
        }

        @Test("/subscribe and /unsubscribe errors: bad URLs and forms, another host's subscription, the subscriber limit")
        func subscriptionErrors() throws {
            // Not `Rig.run`: Swift 6.3.1 crashes (SendNonSendable) on this body in a closure.
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            for arguments: [OSCValue] in [
                [.string("http://127.0.0.1:9000")],
                [.string("osc.tcp://127.0.0.1:9000")],
                [.string("osc.udp://127.0.0.1:0")],
                [.string("osc.udp://127.0.0.1:70000")],
                [.string("osc.udp://127.0.0.1:")],
                [.string("osc.udp://example.com:9000")],
                [.string("osc.udp://:9000")],
                [.string("loud")],
                [.string("native"), .string("both")],
                [.string("osc.udp://127.0.0.1:9000"), .string("native"), .string("both")],
                [.string("/no/such/parameter")],
                [.string("/filter/[cutoff")],
                [.int(5)],
            ] {
                let reply = try rig.osc.ask("/subscribe", arguments, reply: "/subscribed", timeout: .seconds(3))
                expectErrorReply(reply, for: "/subscribe")
            }
            // Nothing was subscribed by those: /unsubscribe has nothing to remove.
            expectErrorReply(try rig.osc.ask("/unsubscribe", reply: "/unsubscribed"), for: "/unsubscribe")
            expectErrorReply(try rig.osc.ask("/unsubscribe", [.string("osc.udp://127.0.0.1:9")], reply: "/unsubscribed"),
                             for: "/unsubscribe")
            expectErrorReply(try rig.osc.ask("/unsubscribe", [.string("garbage")], reply: "/unsubscribed"), for: "/unsubscribe")
            expectErrorReply(try rig.osc.ask("/unsubscribe", [.int(1)], reply: "/unsubscribed"), for: "/unsubscribe")

            // A client on another host (127.0.0.2) can neither remove nor redirect nor change
            // someone else's subscription.
            let watcher = try OSCTestClient(port: rig.ready.oscPort)
            #expect(try subscribe(watcher).address == "/subscribed")
            try watcher.sync()  // sent with the answer to /subscribe: before /synced
            let stranger = try OSCTestClient(port: rig.ready.oscPort, localAddress: loopbackAddress(2))
            try stranger.ping()
            expectErrorReply(try stranger.ask("/unsubscribe", [.string(watcher.url)], reply: "/unsubscribed"),
                             for: "/unsubscribe", hint: "another client")
            expectErrorReply(try stranger.ask("/subscribe", [.string(watcher.url), .string("normalized")], reply: "/subscribed"),
                             for: "/subscribe", hint: "another client")
            _ = try rig.osc.setWithID("/filter/q", .float(2), id: 1)
            _ = try watcher.waitFor("native feedback still flowing") { $0.address == "/filter/q" && $0.arguments == [.float(2)] }
            // A marker: normalized feedback of the q, queued before, would arrive before it.
            _ = try rig.osc.setWithID("/filter/q", .float(3), id: 2)
            #expect(!(try watcher.waitForChangeFeedback("/filter/q", .float(3))).contains { $0.address.hasSuffix("/normalized") })

            // The limits: 8 per client (address and port), 32 in all (the watcher holds one). The
            // sinks stay open: a closed one would be dropped as unreachable.
            var sinks: [OSCTestClient] = []
            func subscribeSinks(_ owner: OSCTestClient, _ count: Int) throws {
                for _ in 0..<count {
                    let sink = try OSCTestClient(port: rig.ready.oscPort)
                    sinks.append(sink)
                    owner.send("/subscribe", .string(sink.url))
                    try sink.confirmSubscription()
                    let reply = try sink.waitFor("/subscribed", timeout: .seconds(5)) { $0.address == "/subscribed" }.match
                    #expect(reply.string(0).map { $0.contains(":\(sink.localPort)") } == true, "\(reply)")
                }
            }
            try subscribeSinks(rig.osc, 8)
            #expect(!(try rig.osc.sync()).contains { $0.address == "/error" })  // and its eight /subscribe/pending
            let ninth = try OSCTestClient(port: rig.ready.oscPort)
            expectErrorReply(try subscribe(rig.osc, [.string(ninth.url)]), for: "/subscribe", hint: "holds 8")
            let owners = try (0..<3).map { _ in try OSCTestClient(port: rig.ready.oscPort) }
            try subscribeSinks(owners[0], 8)
            try subscribeSinks(owners[1], 8)
            try subscribeSinks(owners[2], 7)
            #expect(!(try owners.flatMap { try $0.sync() }).contains { $0.address == "/error" })
            #expect(try rig.osc.status()["subscribers"]?.number == 32)
            let extra = try OSCTestClient(port: rig.ready.oscPort)
            expectErrorReply(try subscribe(owners[2], [.string(extra.url)]), for: "/subscribe", hint: "limit")
            expectErrorReply(try subscribe(extra), for: "/subscribe", hint: "limit")
            // Unsubscribing without a URL removes what the sender subscribed.
            rig.osc.send("/unsubscribe")
            var removed = 0
            while removed < 8 {
                _ = try rig.osc.waitFor("/unsubscribed \(removed + 1) of 8") { $0.address == "/unsubscribed" }
                removed += 1
            }
            #expect(try subscribe(extra).address == "/subscribed", "room again after /unsubscribe")
            #expect(try rig.osc.status()["subscribers"]?.number == 25)
        }
    }
}
