import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The OSC contract over real UDP against the real binary.
    @Suite("OSC contract") struct OSCContract {
        /// Sends `address args`, expects `/error address message` and no `/state` for it; then,
        /// when `query` is given, checks that the parameter still holds `unchanged`.
        private func expectRejected(_ osc: OSCTestClient, _ address: String, _ arguments: [OSCValue],
                                    messageContains hint: String? = nil,
                                    query: String? = nil, unchanged: OSCValue? = nil,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            osc.sendRaw(OSCWire.encode(OSCTestMessage(address, arguments)))
            let (error, before) = try osc.waitFor("/error for \(address) \(arguments)", timeout: .seconds(5)) {
                $0.address == "/error"
            }
            #expect(error.string(0) == address, "\(error)", sourceLocation: sourceLocation)
            let message = error.string(1) ?? ""
            #expect(!message.isEmpty, "\(error)", sourceLocation: sourceLocation)
            if let hint {
                #expect(message.localizedCaseInsensitiveContains(hint), "\(error)", sourceLocation: sourceLocation)
            }
            var seen = before
            if let query {
                osc.send(query)
                let reply = try osc.waitFor("reply to \(query)") { $0.address == query && $0.arguments.count == 1 }
                seen += reply.before
                #expect(reply.match.arguments[0] == unchanged, "\(query) changed to \(reply.match)",
                        sourceLocation: sourceLocation)
            }
            #expect(!seen.contains { $0.address == "/state" }, "a rejected request produced \(seen)",
                    sourceLocation: sourceLocation)
        }

        @Test("/sync is answered once every earlier request of the client ended: sets, a session parameter, a patch load, a change timed ahead")
        func syncWaitsForEarlierRequests() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            try rig.osc.waitForSession()
            let start = ContinuousClock.now
            rig.osc.send("/output/gain", .float(-6))
            rig.osc.send("/processing/intensity", .float(0.7))
            rig.osc.send("/patch/load", .int(2))
            rig.osc.sendBundle([OSCTestMessage("/ringmod/mix", [.float(0.25)])],
                           timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 0.4))
            let before = try rig.osc.sync(77)
            let elapsed = ContinuousClock.now - start
            report("/sync after a change timed 0.4 s ahead: answered after", elapsed / .seconds(1), unit: "s")
            #expect(elapsed >= .milliseconds(380), "/synced before the timed change could apply")
            let terminal: Set<String> = ["applied", "failed", "superseded"]
            for address in ["/output/gain", "/processing/intensity", "/ringmod/mix"] {
                #expect(before.contains { $0.address == "/state" && $0.string(0) == address && terminal.contains($0.string(1) ?? "") },
                        "no terminal /state for \(address) before /synced: \(before)")
            }
            #expect(before.contains { $0.address == "/patch/current" && $0.number(0) == 2 }, "the patch load's answer: \(before)")
            // A client with nothing under way is answered at once, and the ids come back as sent.
            #expect(try rig.osc.sync(-5).isEmpty)
        }

        @Test("Bad requests get /error with the address and a message; values stay unchanged")
        func badRequests() throws {
            try Rig.run(.process(channels: 1)) { rig in

                // Unknown addresses, with and without arguments.
                try expectRejected(rig.osc, "/no/such/thing", [.float(1)], messageContains: "unknown")
                try expectRejected(rig.osc, "/filter/cutof", [], messageContains: "unknown")
                // Wrong type.
                try expectRejected(rig.osc, "/filter/cutoff", [.string("abc")], messageContains: "float",
                                   query: "/filter/cutoff", unchanged: .float(1000))
                try expectRejected(rig.osc, "/filter/enabled", [.string("yes")],
                                   query: "/filter/enabled", unchanged: .int(0))
                try expectRejected(rig.osc, "/filter/type", [.float(2)],
                                   query: "/filter/type", unchanged: .string("lowpass"))
                // Wrong arity.
                try expectRejected(rig.osc, "/filter/cutoff", [.float(500), .float(600), .float(700)],
                                   query: "/filter/cutoff", unchanged: .float(1000))
                try expectRejected(rig.osc, "/output/gain", [.float(-3), .string("x")],
                                   query: "/output/gain", unchanged: .float(0))
                // Out of range: rejected, not clamped.
                try expectRejected(rig.osc, "/filter/cutoff", [.float(5)], messageContains: "range",
                                   query: "/filter/cutoff", unchanged: .float(1000))
                try expectRejected(rig.osc, "/filter/cutoff", [.int(5)], messageContains: "range",
                                   query: "/filter/cutoff", unchanged: .float(1000))
                try expectRejected(rig.osc, "/filter/cutoff", [.float(.nan)],
                                   query: "/filter/cutoff", unchanged: .float(1000))
                try expectRejected(rig.osc, "/output/gain", [.float(20)], messageContains: "range",
                                   query: "/output/gain", unchanged: .float(0))
                try expectRejected(rig.osc, "/filter/q", [.float(0)], messageContains: "range",
                                   query: "/filter/q", unchanged: .float(0.7071))
                try expectRejected(rig.osc, "/filter/type", [.string("bogus")], messageContains: "bogus",
                                   query: "/filter/type", unchanged: .string("lowpass"))
                try expectRejected(rig.osc, "/ringmod/frequency", [.float(41)], messageContains: "range",
                                   query: "/ringmod/frequency", unchanged: .float(22))

                // Read-only parameters.
                try expectRejected(rig.osc, "/processing/can_enable", [.int(1)], messageContains: "read-only",
                                   query: "/processing/can_enable", unchanged: .int(0))
                try expectRejected(rig.osc, "/processing/fitting", [.int(2)], messageContains: "read-only",
                                   query: "/processing/fitting", unchanged: .int(3))

                // The surface still works after all that.
                expectApplied(try rig.osc.set("/filter/cutoff", .float(2000)), "/filter/cutoff", .float(2000))
                #expect(try rig.osc.query("/filter/cutoff") == .float(2000))
            }
        }

        /// Sets `/filter/enabled` with each form and checks the `/state` reports and a query.
        private func checkBooleanForms(_ cases: [(OSCValue, Int32)]) throws {
            try Rig.run(.process(channels: 1)) { rig in
                var current: Int32 = 0
                for (sent, expected) in cases {
                    expectApplied(try rig.osc.set("/filter/enabled", sent), "/filter/enabled", .int(expected),
                                  changed: expected != current)
                    current = expected
                    #expect(try rig.osc.query("/filter/enabled") == .int(expected), "after sending \(sent)")
                }
            }
        }

        @Test("/filter/enabled accepts int and float (non-zero = true) and reports int 0/1")
        func booleanNumberForms() throws {
            try checkBooleanForms([
                (.int(1), 1), (.int(0), 0), (.int(-3), 1), (.float(0), 0), (.float(1), 1), (.float(0.5), 1), (.int(0), 0),
            ])
        }

        @Test("/filter/enabled accepts T and F and reports int 0/1")
        func booleanTrueFalseForms() throws {
            try checkBooleanForms([(.true, 1), (.false, 0), (.true, 1)])
        }

        @Test("A bundle of /filter/type, /filter/cutoff and /filter/q: all three applied and in effect")
        func bundle() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let audio = try rig.audio()
                expectApplied(try rig.osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
                let changes: [(String, OSCValue)] = [
                    ("/filter/type", .string("highpass")), ("/filter/cutoff", .float(2500)), ("/filter/q", .float(2)),
                ]
                rig.osc.sendBundle(changes.map { OSCTestMessage($0.0, [$0.1]) })

                var reports: [OSCTestMessage] = []
                func terminal(_ address: String) -> Bool {
                    reports.contains { $0.string(0) == address && ["applied", "failed", "superseded"].contains($0.string(1) ?? "") }
                }
                while !changes.allSatisfy({ terminal($0.0) }) {
                    reports.append(try rig.osc.waitFor("/state reports for the bundle") { $0.address == "/state" }.match)
                }
                for (address, value) in changes {
                    expectApplied(reports.filter { $0.string(0) == address }, address, value)
                }
                for (address, value) in changes {
                    #expect(try rig.osc.query(address) == value)
                }
                // And the audio follows all three: the measured response is the cookbook highpass
                // at 2.5 kHz, Q 2 (an independent float64 reference).
                let reference = CookbookBiquad(kind: .hpf, f0: 2500, q: 2, dbGain: 0, fs: Capture.sampleRate)
                let mix = zip(Capture.tone(250), Capture.tone(10000)).map { $0 + $1 }
                let captured = try audio.capture([mix], frames: Capture.captureFrames)[0]
                for frequency in [250.0, 10000.0] {
                    let measured = Capture.toneLevel(captured, frequency: frequency)
                    let expected = reference.magnitudeDecibels(atFrequency: frequency, fs: Capture.sampleRate)
                    report("bundle highpass 2.5 kHz Q 2 at \(Int(frequency)) Hz (expected \(String(format: "%.3f", expected)))", measured)
                    #expect(abs(measured - expected) <= 0.1, "\(frequency) Hz: \(measured) dB, expected \(expected) dB")
                }
            }
        }

        @Test("/ping, /list and /status answer")
        func commands() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            rig.osc.send("/ping", .int(42))
            #expect(try rig.osc.waitFor("/pong") { $0.address == "/pong" }.match.arguments == [.int(42)])

            rig.osc.send("/list")
            let end = try rig.osc.waitFor("/list/end") { $0.address == "/list/end" }
            let params = end.before.filter { $0.address == "/list/param" }.compactMap { $0.string(0) }
            #expect(end.match.arguments == [.int(Int32(params.count))])
            for address in ["/filter/enabled", "/filter/type", "/filter/cutoff", "/filter/q", "/filter/gain",
                            "/ringmod/enabled", "/ringmod/frequency", "/ringmod/mix", "/output/gain"] {
                #expect(params.contains(address), "/list lacks \(address)")
            }

            let first = try rig.osc.status()
            #expect(first["connected"] == .int(1))
            #expect(first["sample_rate"]?.number == 48000)
            #expect(first["xruns"]?.number != nil)
            let cycles = try #require(first["cycles"]?.number)
            // Cycles advance while the server runs.
            let deadline = ContinuousClock.now + .seconds(10)
            var later = cycles
            while later <= cycles + 10 && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
                later = try rig.osc.status()["cycles"]?.number ?? cycles
            }
            #expect(later > cycles + 10)
        }
    }
}
