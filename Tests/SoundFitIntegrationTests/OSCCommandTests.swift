import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Every command of the contract and its error paths, over real UDP against the
    /// real binary.
    @Suite("OSC commands") struct OSCCommands {
        /// Sends `address arguments`, expects `/error address …` (and no reply at `replyAddress`).
        private func expectRejected(_ osc: OSCTestClient, _ address: String, _ arguments: [OSCValue],
                                    reply replyAddress: String, hint: String? = nil,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            let reply = try osc.ask(address, arguments, reply: replyAddress, timeout: .seconds(5))
            expectErrorReply(reply, for: address, hint: hint, sourceLocation: sourceLocation)
        }

        /// A hearing profile file (left ear; the right ear gets the same), so presets exist and
        /// processing can be enabled.
        static func writeProfile() throws -> URL {
            let directory = try UniqueName.temporaryDirectory("soundfit-profile")
            let url = directory.appendingPathComponent("profile.json")
            let points = [(500, 30), (1000, 35), (2000, 45), (4000, 55)].map { "{\"hz\": \($0.0), \"db_hl\": \($0.1)}" }
            try "{\"version\": 1, \"left\": [\(points.joined(separator: ", "))]}".write(to: url, atomically: true, encoding: .utf8)
            return url
        }

        @Test("/session, /session/activate and /session/deactivate, with --tech-level and --personalization, and every bad request")
        func sessionCommands() throws {
            try Rig.run(.process(channels: 1, arguments: ["--tech-level", "2", "--personalization", "single-preset"])) { rig in

                let initial = try rig.osc.session()
                #expect(initial.arguments == [.string("active"), .string("single_preset"), .int(2)], "\(initial)")
                #expect(try rig.osc.query("/processing/fitting") == .int(2))
                #expect(try rig.osc.status()["session"] == .string("active"))

                try expectRejected(rig.osc, "/session", [.int(1)], reply: "/session")
                try expectRejected(rig.osc, "/session/activate", [.string("fine_tuning"), .int(4)], reply: "/session", hint: "already")
                try expectRejected(rig.osc, "/session/deactivate", [.int(1)], reply: "/session")
                #expect(try rig.osc.session().arguments == initial.arguments, "a rejected request changed the session")

                let deactivated = try rig.osc.ask("/session/deactivate", reply: "/session")
                #expect(deactivated.arguments == [.string("inactive")], "\(deactivated)")
                #expect(try rig.osc.session().arguments == [.string("inactive")])
                #expect(try rig.osc.status()["session"] == .string("inactive"))

                // Session parameters are not available without a session.
                try expectRejected(rig.osc, "/processing/enabled", [.int(1)], reply: "/state")
                try expectRejected(rig.osc, "/processing/intensity", [.float(0.3)], reply: "/state")
                try expectRejected(rig.osc, "/processing/fitting", [], reply: "/processing/fitting")
                try expectRejected(rig.osc, "/session/interrupt", [.string("phone_call")], reply: "/session/interrupted")

                // Bad activations: nothing changes.
                for (arguments, hint) in [
                    ([OSCValue.string("bogus"), .int(3)], "bogus"),
                    ([.string("fine_tuning"), .int(0)], nil),
                    ([.string("fine_tuning"), .int(5)], nil),
                    ([.string("fine_tuning")], nil),
                    ([.int(3), .string("fine_tuning")], nil),
                    ([.string("fine_tuning"), .string("3")], nil),
                    ([.string("fine_tuning"), .int(3), .int(1)], nil),
                    ([], nil),
                ] as [([OSCValue], String?)] {
                    try expectRejected(rig.osc, "/session/activate", arguments, reply: "/session", hint: hint)
                }
                #expect(try rig.osc.session().arguments == [.string("inactive")], "a rejected activation changed the session")

                let activated = try rig.osc.ask("/session/activate", [.string("fine_tuning"), .int(4)], reply: "/session")
                #expect(activated.arguments == [.string("active"), .string("fine_tuning"), .int(4)], "\(activated)")
                #expect(try rig.osc.query("/processing/fitting") == .int(4))
                #expect(try rig.osc.session().arguments == activated.arguments)
            }
        }

        @Test("/session/interrupt and /session/resolve: nested reasons, enabling while interrupted is an /error, bad arguments")
        func interruptions() throws {
            let profile = try Self.writeProfile()
            defer { try? FileManager.default.removeItem(at: profile.deletingLastPathComponent()) }
            try Rig.run(.process(channels: 1, arguments: ["--profile", profile.path])) { rig in
                #expect(try rig.osc.query("/processing/can_enable") == .int(1), "the profile should make a preset available")
                let enable = try rig.osc.set("/processing/enabled", .int(1))
                #expect(enable.last?.string(1) == "applied", "\(enable)")
                #expect(try rig.osc.query("/processing/enabled") == .int(1))

                let first = try rig.osc.ask("/session/interrupt", [.string("phone_call")], reply: "/session/interrupted")
                #expect(first.arguments == [.int(1)], "\(first)")
                #expect(try rig.osc.query("/processing/enabled") == .int(0), "an interruption must switch processing off")
                try expectRejected(rig.osc, "/processing/enabled", [.int(1)], reply: "/state", hint: "interrupt")
                try expectRejected(rig.osc, "/processing/enabled", [.true], reply: "/state", hint: "interrupt")
                try expectRejected(rig.osc, "/processing/enabled/normalized", [.float(1)], reply: "/state")
                #expect(try rig.osc.query("/processing/enabled") == .int(0))

                let second = try rig.osc.ask("/session/interrupt", [.string("alarm")], reply: "/session/interrupted")
                #expect(second.arguments == [.int(1)])
                let partly = try rig.osc.ask("/session/resolve", [.string("phone_call")], reply: "/session/interrupted")
                #expect(partly.arguments == [.int(1)], "another interruption remains: \(partly)")
                #expect(try rig.osc.query("/processing/enabled") == .int(0))
                try expectRejected(rig.osc, "/processing/enabled", [.int(1)], reply: "/state", hint: "interrupt")

                let resolved = try rig.osc.ask("/session/resolve", [.string("alarm")], reply: "/session/interrupted")
                #expect(resolved.arguments == [.int(0)], "\(resolved)")
                // Processing returns to its state from before the first interruption.
                let deadline = ContinuousClock.now + .seconds(5)
                var enabled = try rig.osc.query("/processing/enabled")
                while enabled != .int(1) && ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
                    enabled = try rig.osc.query("/processing/enabled")
                }
                #expect(enabled == .int(1), "processing did not return to enabled after the last interruption ended")
                // Resolving a reason that is not active changes nothing.
                let none = try rig.osc.ask("/session/resolve", [.string("never_started")], reply: "/session/interrupted")
                #expect(none.arguments == [.int(0)])
                #expect(try rig.osc.query("/processing/enabled") == .int(1))
                // After resolving, enabling works again.
                let disable = try rig.osc.set("/processing/enabled", .int(0))
                #expect(disable.last?.string(1) == "applied", "\(disable)")

                for address in ["/session/interrupt", "/session/resolve"] {
                    try expectRejected(rig.osc, address, [], reply: "/session/interrupted")
                    try expectRejected(rig.osc, address, [.string("")], reply: "/session/interrupted")
                    try expectRejected(rig.osc, address, [.int(3)], reply: "/session/interrupted")
                    try expectRejected(rig.osc, address, [.string("a"), .string("b")], reply: "/session/interrupted")
                }
                // None of the bad requests started an interruption.
                let enableAgain = try rig.osc.set("/processing/enabled", .int(1))
                #expect(enableAgain.last?.string(1) == "applied", "\(enableAgain)")
            }
        }

        @Test("/config/delivery and /config/timeout: queries, changes that take effect, bad arguments")
        func configuration() throws {
            try Rig.run(.process(channels: 1)) { rig in
                func delivery(_ arguments: [OSCValue] = []) throws -> OSCTestMessage {
                    try rig.osc.ask("/config/delivery", arguments, reply: "/config/delivery")
                }
                func timeout(_ arguments: [OSCValue] = []) throws -> OSCTestMessage {
                    try rig.osc.ask("/config/timeout", arguments, reply: "/config/timeout")
                }
                func expectDelivery(_ reply: OSCTestMessage, _ style: String, _ settle: Double,
                                    sourceLocation: SourceLocation = #_sourceLocation) {
                    #expect(reply.address == "/config/delivery" && reply.string(0) == style && reply.arguments.count == 3
                            && isClose(reply.arguments[1], settle, tolerance: 1e-4) && reply.string(2) == "seconds",
                            "expected \(style) \(settle) seconds: \(reply)",
                            sourceLocation: sourceLocation)
                }

                expectDelivery(try delivery(), "continuous", 0)
                #expect(isClose(try timeout().arguments.first, 10, tolerance: 1e-4))

                expectDelivery(try delivery([.string("discrete")]), "discrete", 0.2)
                expectDelivery(try delivery(), "discrete", 0.2)
                // Discrete delivery in effect: a set waits (pending) before it is applied.
                let states = try rig.osc.set("/filter/cutoff", .float(1500)).compactMap { $0.string(1) }
                #expect(states == ["pending", "applying", "applied"], "\(states)")
                expectDelivery(try delivery([.string("discrete"), .float(0.05)]), "discrete", 0.05)
                expectDelivery(try delivery([.string("discrete"), .int(1)]), "discrete", 1)
                expectDelivery(try delivery([.string("continuous")]), "continuous", 0)
                let continuous = try rig.osc.set("/filter/cutoff", .float(1600)).compactMap { $0.string(1) }
                #expect(continuous == ["applying", "applied"], "\(continuous)")

                for (arguments, hint) in [
                    ([OSCValue.string("sometimes")], "sometimes"),
                    ([.string("discrete"), .float(-1)], nil),
                    ([.string("discrete"), .string("x")], nil),
                    ([.string("continuous"), .float(0.3)], nil),
                    ([.float(0.2)], nil),
                    ([.string("discrete"), .float(0.1), .float(0.2)], nil),
                ] as [([OSCValue], String?)] {
                    let reply = try delivery(arguments)
                    expectErrorReply(reply, for: "/config/delivery", hint: hint)
                }
                expectDelivery(try delivery(), "continuous", 0)

                #expect(isClose(try timeout([.float(2)]).arguments.first, 2, tolerance: 1e-4))
                #expect(isClose(try timeout([.int(3)]).arguments.first, 3, tolerance: 1e-4))
                for arguments: [OSCValue] in [[.float(0)], [.float(-1)], [.float(.nan)], [.string("x")], [.float(1), .float(2)]] {
                    expectErrorReply(try timeout(arguments), for: "/config/timeout")
                }
                let after = try timeout()
                #expect(after.arguments.count == 2 && isClose(after.arguments.first, 3, tolerance: 1e-4)
                        && after.string(1) == "seconds", "\(after)")
            }
        }

        /// Sets `address` (a `/normalized` form) with a request id and expects it applied.
        private func setNormalized(_ osc: OSCTestClient, _ address: String, _ value: OSCValue, id: Int32,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
            let reports = try osc.setWithID(address, value, id: id)
            #expect(reports.last?.string(1) == "applied", "\(address) \(value): \(reports)", sourceLocation: sourceLocation)
        }

        @Test("Hostile numbers (NaN, ±inf, 1e300, 2^62) in every numeric argument get an /error and never stop soundfit")
        func hostileNumbers() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let hostile: [OSCValue] = [.float(.nan), .float(.infinity), .float(-.infinity), .double(1e300), .int64(1 << 62)]
                let requests: [(String, [OSCValue], String)] = hostile.flatMap { value -> [(String, [OSCValue], String)] in
                    [
                        ("/config/delivery", [.string("discrete"), value], "/config/delivery"),
                        ("/config/timeout", [value], "/config/timeout"),
                        ("/session/activate", [.string("fine_tuning"), value], "/session"),
                        ("/filter/cutoff", [value], "/state"),
                        ("/filter/cutoff/normalized", [value], "/state"),
                        ("/processing/intensity", [value], "/state"),
                        ("/filter/cutoff", [.float(500), value], "/state"),
                        ("/profile/audiogram", [.string("both"), .float(500), value, .float(1000), .float(20),
                                                .float(2000), .float(20), .float(4000), .float(20)], "/profile/presets"),
                        ("/patch/load", [value], "/patch/current"),
                    ]
                }
                var crashedBy: String?
                for (address, arguments, replyAddress) in requests {
                    let reply = try? rig.osc.ask(address, arguments, reply: replyAddress, timeout: .seconds(3))
                    if !rig.soundfit.process.isRunning {
                        crashedBy = "\(address) \(arguments)"
                        break
                    }
                    if let reply {
                        expectErrorReply(reply, for: address)
                    } else {
                        Issue.record("no reply to \(address) \(arguments)")
                    }
                }
                #expect(crashedBy == nil, "soundfit died on \(crashedBy ?? ""): \(rig.soundfit.process.standardError.suffix(400))")
                if crashedBy == nil {
                    try rig.osc.ping()
                    let delivery = try rig.osc.ask("/config/delivery", reply: "/config/delivery")
                    #expect(delivery.string(0) == "continuous", "\(delivery)")
                    #expect(isClose(try rig.osc.ask("/config/timeout", reply: "/config/timeout").arguments.first, 10, tolerance: 1e-4))
                    #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                }
            }
        }

        @Test("<address>/normalized: set with tapers (log Hz, linear dB, linear, bool, choice), query, request ids, errors")
        func normalizedForm() throws {
            try Rig.run(.process(channels: 1)) { rig in

                // Log taper for Hz: 0.5 is the geometric middle of 20…20000 Hz.
                let cutoff = try rig.osc.setWithID("/filter/cutoff/normalized", .float(0.5), id: 5)
                let middle = (20.0 * 20000.0).squareRoot()
                #expect(cutoff.last?.string(1) == "applied", "\(cutoff)")
                for report in cutoff {
                    #expect(report.string(0) == "/filter/cutoff", "/state must name the parameter's own address: \(report)")
                    #expect(isClose(report.arguments.count > 2 ? report.arguments[2] : nil, middle, tolerance: 0.05),
                            "/state must carry the native value: \(report)")
                    #expect(report.requestID == 5, "request id not echoed: \(report)")
                }
                #expect(isClose(try rig.osc.query("/filter/cutoff"), middle, tolerance: 0.05))
                #expect(isClose(try rig.osc.query("/filter/cutoff/normalized"), 0.5, tolerance: 1e-4))

                // Linear in dB for gains, linear for other floats.
                try setNormalized(rig.osc, "/output/gain/normalized", .float(0.5), id: 11)
                #expect(isClose(try rig.osc.query("/output/gain"), -24, tolerance: 1e-3))  // −60…12 dB
                #expect(isClose(try rig.osc.query("/output/gain/normalized"), 0.5, tolerance: 1e-4))
                try setNormalized(rig.osc, "/filter/q/normalized", .float(0.25), id: 12)
                #expect(isClose(try rig.osc.query("/filter/q"), 0.1 + 0.25 * 17.9, tolerance: 1e-3))
                try setNormalized(rig.osc, "/ringmod/frequency/normalized", .float(1), id: 13)
                #expect(try rig.osc.query("/ringmod/frequency") == .float(40), "the ends map exactly onto the range")
                try setNormalized(rig.osc, "/ringmod/frequency/normalized", .float(0), id: 14)
                #expect(try rig.osc.query("/ringmod/frequency") == .float(15))
                try setNormalized(rig.osc, "/processing/intensity/normalized", .float(0.25), id: 15)
                #expect(isClose(try rig.osc.query("/processing/intensity"), 0.25, tolerance: 1e-5))

                // Booleans 0/1 (T/F too), choices by index.
                try setNormalized(rig.osc, "/filter/enabled/normalized", .true, id: 16)
                #expect(try rig.osc.query("/filter/enabled") == .int(1))
                try setNormalized(rig.osc, "/filter/enabled/normalized", .float(0), id: 17)
                #expect(try rig.osc.query("/filter/enabled") == .int(0))
                try setNormalized(rig.osc, "/filter/type/normalized", .float(3.0 / 7.0), id: 18)  // lowpass highpass bandpass [notch] …
                #expect(try rig.osc.query("/filter/type") == .string("notch"))
                #expect(isClose(try rig.osc.query("/filter/type/normalized"), 3.0 / 7.0, tolerance: 1e-4))
                // A read-only parameter has a normalized query, no set.
                #expect(isClose(try rig.osc.query("/processing/fitting/normalized"), 2.0 / 3.0, tolerance: 1e-4))  // 3 in 1…4

                let before = try rig.osc.query("/filter/cutoff")
                for (arguments, hint) in [
                    ([OSCValue.float(1.5)], "range"),
                    ([.float(-0.1)], "range"),
                    ([.float(.nan)], nil),
                    ([.string("half")], nil),
                    ([.float(0.2), .float(0.3)], nil),
                    ([.float(0.2), .string("x")], nil),
                ] as [([OSCValue], String?)] {
                    let reply = try rig.osc.ask("/filter/cutoff/normalized", arguments, reply: "/state")
                    expectErrorReply(reply, for: "/filter/cutoff/normalized", hint: hint)
                }
                #expect(try rig.osc.query("/filter/cutoff") == before, "a rejected normalized set changed the value")
                expectErrorReply(try rig.osc.ask("/processing/fitting/normalized", [.float(0.5)], reply: "/state"),
                                 for: "/processing/fitting/normalized", hint: "read-only")
                expectErrorReply(try rig.osc.ask("/no/such/normalized", [.float(0.5)], reply: "/state"), for: "/no/such/normalized")
                expectErrorReply(try rig.osc.ask("/normalized", [.float(0.5)], reply: "/state"), for: "/normalized")
            }
        }

        @Test("/list describes every parameter of the contract; /status has its keys; /ping without arguments")
        func discovery() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            rig.osc.send("/ping")
            #expect(try rig.osc.waitFor("/pong") { $0.address == "/pong" }.match.arguments.isEmpty)

            rig.osc.send("/list")
            let end = try rig.osc.waitFor("/list/end") { $0.address == "/list/end" }
            let params = end.before.filter { $0.address == "/list/param" }
            #expect(end.match.arguments == [.int(Int32(params.count))])
            let byAddress = Dictionary(params.map { ($0.string(0) ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            #expect(byAddress.count == params.count, "an address is listed twice")
            let contract = ["/processing/enabled", "/processing/intensity", "/processing/preset", "/processing/can_enable",
                            "/processing/fitting", "/filter/enabled", "/filter/type", "/filter/cutoff", "/filter/q",
                            "/filter/gain", "/ringmod/enabled", "/ringmod/frequency", "/ringmod/mix", "/output/gain"]
            for address in contract {
                #expect(byAddress[address] != nil, "/list lacks \(address)")
            }
            let cutoff = try #require(byAddress["/filter/cutoff"])
            #expect(cutoff.arguments.count == 7 && cutoff.string(1) == "float" && cutoff.arguments[3] == .float(20)
                    && cutoff.arguments[4] == .float(20000) && cutoff.arguments[5] == .float(1000)
                    && cutoff.string(6) == "Hz", "\(cutoff)")
            let gain = try #require(byAddress["/output/gain"])
            #expect(gain.arguments.count == 7 && gain.arguments[3] == .float(-60) && gain.arguments[4] == .float(12)
                    && gain.arguments[5] == .float(0) && gain.string(6) == "dB", "\(gain)")
            let type = try #require(byAddress["/filter/type"])
            #expect(type.string(3) == "lowpass highpass bandpass notch peak lowshelf highshelf allpass"
                    && type.string(4) == "lowpass", "\(type)")
            let techLevel = try #require(byAddress["/processing/fitting"])
            let canEnable = try #require(byAddress["/processing/can_enable"])
            #expect(techLevel.string(2) != cutoff.string(2) && canEnable.string(2) == techLevel.string(2),
                    "read-only parameters must be listed with another access than read-write ones: \(techLevel) \(cutoff)")
            // Every listed parameter answers a query at its address.
            for address in byAddress.keys.sorted() where address.hasPrefix("/") {
                rig.osc.send(address)
                let reply = try rig.osc.waitFor("query \(address)") {
                    ($0.address == address && $0.arguments.count == 1) || ($0.address == "/error" && $0.string(0) == address)
                }.match
                #expect(reply.address == address, "listed \(address) does not answer a query: \(reply)")
            }

            let status = try rig.osc.status()
            #expect(status["sample_rate"]?.number == 48000)
            #expect(status["buffer_size"]?.number == 256)
            #expect(status["xruns"]?.number.map { $0 >= 0 } == true, "\(status)")
            #expect(status["callback_load"]?.number.map { $0 >= 0 && $0 < 1 } == true, "\(status)")
            #expect(status["session"] == .string("active"))
            #expect((status["version"]?.stringValue ?? "").isEmpty == false, "\(status)")
            #expect(status["cycles"]?.number.map { $0 > 0 } == true, "\(status)")
        }
    }
}
