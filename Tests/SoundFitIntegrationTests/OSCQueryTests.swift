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

        @Test("every parameter's TYPE, RANGE, VALUE and ACCESS match /list and a UDP query; attributes, containers and HOST_INFO")
        func namespaceMatchesList() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("namespace", rig)
        }

        @Test("/patch/load and /patch/delete list the patches as /patch/list does; a save or delete over UDP or the WebSocket sends PATH_CHANGED to every WebSocket")
        func patchNodesFollowTheLibrary() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("patch-changes", rig)
        }

        @Test("LISTEN /meters/input while a tone plays through JACK streams the meter messages as binary OSC at 25 Hz with the tone's level; IGNORE stops them")
        func listenToMeters() throws {
            let rig = try SoundFitRig(channels: 2)
            defer { rig.stop() }
            let audio = try rig.audio()
            try audio.startPlaying([Capture.tone(1000, amplitude: 0.1), Capture.tone(440, amplitude: 0.05)])
            defer { try? audio.stopPlaying() }
            Thread.sleep(forTimeInterval: 0.3)  // the detectors settle on the tone
            try runClient("listen-meters", rig)
        }

        @Test("LISTEN streams a change made over UDP as the subscriber's OSC message; IGNORE stops it; an unknown path is an ERROR")
        func listenStreamsUDPChanges() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("listen", rig)
        }

        @Test("a set sent as binary OSC over the WebSocket is applied and answered with /state over it; a bad one with /error")
        func setOverWebSocket() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("websocket-set", rig)
        }

        @Test("/meters/subscribe sent as binary OSC over the WebSocket streams the meters back on it at the rate asked")
        func metersOverWebSocket() throws {
            let rig = try SoundFitRig(channels: 2)
            defer { rig.stop() }
            try runClient("websocket-meters", rig)
        }

        @Test("malformed request line, oversized header and body, unknown path and attribute, traversal under /ui: clear errors, nothing changed")
        func badHTTP() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("bad-http", rig)
        }

        @Test("non-OSC binary, non-JSON text, unknown command, oversized frame, reserved opcode: /error, ERROR, close 1009 and 1002; nothing changed")
        func badWebSocket() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("bad-websocket", rig)
        }

        @Test("one connection over the limit is answered 503; the server answers again once connections close")
        func tooManyConnections() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("too-many", rig, extra: ["--max-connections", "32"])
        }

        @Test("a WebSocket client that never reads its answers is closed once its queue passes the bound; others are answered")
        func slowReaderIsDropped() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            try runClient("slow-reader", rig)
            #expect(rig.soundfit.process.standardError.contains("does not read what it is sent"),
                    "\(rig.soundfit.process.standardError.suffix(2000))")
            try rig.osc.ping()
        }

        @Test("a source outside --osc-allow is closed at accept, without an answer")
        func refusedSource() throws {
            let server = try TestJackServer()
            defer { server.stop() }
            let soundfit = try SoundFitProcess(arguments: ["--server", server.name, "--no-start-server", "--channels", "1",
                                                           "--osc-allow", "10.0.0.0/8"])
            defer { soundfit.stop() }
            try runClient("refused", ready: try soundfit.waitForReady(), soundfit: soundfit)
        }

        @Test("--no-http serves no port: the ready line says http=off")
        func noHTTP() throws {
            let rig = try SoundFitRig(channels: 1, extraArguments: ["--no-http"])
            defer { rig.stop() }
            #expect(rig.ready.fields["http"] == "off")
            #expect(rig.ready.httpPort == nil)
        }
    }
}
