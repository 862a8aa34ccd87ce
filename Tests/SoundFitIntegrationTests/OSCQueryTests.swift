import Foundation
import Testing

extension SoundFitIntegration {
    /// The OSCQuery server (HTTP and WebSocket on `--http-port`) read by
    /// an independent client in Python (`Tests/Scripts/oscquery_client.py`: plain `http.client`,
    /// a hand-written RFC 6455 client and OSC codec), against the real binary and a real jackd.
    @Suite("OSCQuery over HTTP and WebSocket") struct OSCQuery {
        /// Runs one check of the Python client against `rig`; fails with its output unless it passes.
        private func runClient(_ check: String, _ rig: SoundFitRig, extra: [String] = [],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
            try runClient(check, ready: rig.ready, soundfit: rig.soundfit, extra: extra, sourceLocation: sourceLocation)
        }

        private func runClient(_ check: String, ready: ReadyLine, soundfit: SoundFitProcess, extra: [String] = [],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
            let httpPort = try #require(ready.httpPort, "the ready line names no HTTP port: \(ready.fields)")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Scripts/oscquery_client.py").path
            let client = try ChildProcess(label: "oscquery_client.py \(check)", executable: "/usr/bin/env",
                                          arguments: ["python3", script, check, "--http", "\(httpPort)",
                                                      "--osc", "\(ready.oscPort)"] + extra)
            defer { client.stop() }
            #expect(client.waitForExit(timeout: .seconds(120)), "\(check) did not finish", sourceLocation: sourceLocation)
            print(client.standardOutput)
            #expect(client.termination?.status == 0 && client.standardOutput.contains("passed \(check)"),
                    "\(client.standardOutput)\n\(client.standardError)\nsoundfit: \(soundfit.process.standardError.suffix(2000))",
                    sourceLocation: sourceLocation)
        }

        /// One check of the Python client that needs nothing but a fresh rig (the check's claim names
        /// the case).
        struct Check: Sendable, CustomTestStringConvertible {
            var name: String
            var channels = 1
            var extra: [String] = []
            var claim: String
            var testDescription: String { "\(name): \(claim)" }
        }

        static let checks = [
            Check(name: "namespace",
                  claim: "every parameter's TYPE, RANGE, VALUE and ACCESS match /list and a UDP query; attributes, containers and HOST_INFO"),
            Check(name: "patch-changes",
                  claim: "/patch/load and /patch/delete list the patches as /patch/list does; a save or delete over UDP or the WebSocket sends PATH_CHANGED to every WebSocket"),
            Check(name: "listen",
                  claim: "LISTEN streams a change made over UDP as the subscriber's OSC message; IGNORE stops it; an unknown path is an ERROR"),
            Check(name: "websocket-set",
                  claim: "a set sent as binary OSC over the WebSocket is applied and answered with /state over it; a bad one with /error"),
            Check(name: "websocket-meters", channels: 2,
                  claim: "/meters/subscribe sent as binary OSC over the WebSocket streams the meters back on it at the rate asked"),
            Check(name: "bad-http",
                  claim: "malformed request line, oversized header and body, unknown path and attribute, traversal under /ui: clear errors, nothing changed"),
            Check(name: "bad-websocket",
                  claim: "non-OSC binary, non-JSON text, unknown command, oversized frame, reserved opcode: /error, ERROR, close 1009 and 1002; nothing changed"),
            Check(name: "too-many", extra: ["--max-connections", "32"],
                  claim: "one connection over the limit is answered 503; the server answers again once connections close"),
        ]

        @Test("The Python client's check passes against a fresh soundfit", arguments: checks)
        func clientCheck(_ check: Check) throws {
            try Rig.run(.process(channels: check.channels)) { rig in
                try runClient(check.name, rig, extra: check.extra)
            }
        }

        @Test("LISTEN /meters/input while a tone plays through JACK streams the meter messages as binary OSC at 25 Hz with the tone's level; IGNORE stops them")
        func listenToMeters() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let audio = try rig.audio()
                try audio.startPlaying([Capture.tone(1000, amplitude: 0.1), Capture.tone(440, amplitude: 0.05)])
                defer { try? audio.stopPlaying() }
                // The detectors settle on the tone: the UDP client reads the meters until they show
                // its levels, then leaves the stream to the client under test.
                let subscribed = try rig.osc.ask("/meters/subscribe", [.float(20)], reply: "/meters/subscribed")
                #expect(subscribed.address == "/meters/subscribed", "\(subscribed)")
                let expected = [-20.0, -23.01, -26.02, -29.03]
                try ResponseAndMeters.waitForInputMeters(rig.osc) { values in
                    values.count == 4 && zip(values, expected).allSatisfy { abs($0 - $1) <= 0.5 }
                }
                #expect(try rig.osc.ask("/meters/unsubscribe", reply: "/meters/unsubscribed").address == "/meters/unsubscribed")
                try runClient("listen-meters", rig)
            }
        }

        @Test("a WebSocket client that never reads its answers is closed once its queue passes the bound; others are answered")
        func slowReaderIsDropped() throws {
            try Rig.run(.process(channels: 1)) { rig in
                try runClient("slow-reader", rig)
                #expect(rig.soundfit.process.standardError.contains("does not read what it is sent"),
                        "\(rig.soundfit.process.standardError.suffix(2000))")
                try rig.osc.ping()
            }
        }

        @Test("a source outside --osc-allow is closed at accept, without an answer")
        func refusedSource() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-allow", "10.0.0.0/8"])) { rig in
                try runClient("refused", ready: try rig.soundfit.waitForReady(), soundfit: rig.soundfit)
            }
        }

        @Test("--no-http serves no port: the ready line says http=off")
        func noHTTP() throws {
            try Rig.run(.process(channels: 1, arguments: ["--no-http"])) { rig in
                #expect(rig.ready.fields["http"] == "off")
                #expect(rig.ready.httpPort == nil)
            }
        }
    }
}
