import Foundation
import Testing

extension SoundFitIntegration {
    /// Issue 13, items 1 and 4: the OSCQuery server (HTTP and WebSocket on `--http-port`) read by
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

        /// Whether an Avahi daemon runs on this machine (its pid file; the path is built into
        /// avahi-daemon, so only one runs per machine).
        private static var avahiDaemonRuns: Bool { FileManager.default.fileExists(atPath: "/run/avahi-daemon/pid") }

        @Test("zeroconf: without an Avahi daemon it is logged once and SoundFit carries on; with one, avahi-browse finds _oscjson._tcp on the HTTP port")
        func zeroconf() throws {
            let daemonRuns = Self.avahiDaemonRuns
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            if daemonRuns {
                let httpPort = try #require(rig.ready.httpPort)
                var found: [Substring] = []
                let deadline = ContinuousClock.now + .seconds(10)
                while found.isEmpty, ContinuousClock.now < deadline {
                    let browse = try ChildProcess(label: "avahi-browse", executable: "/usr/bin/env",
                                                  arguments: ["avahi-browse", "-rtp", "_oscjson._tcp"])
                    _ = browse.waitForExit(timeout: .seconds(10))
                    // =;iface;proto;name;type;domain;host;address;port;txt — the resolved services.
                    found = browse.standardOutput.split(separator: "\n").filter { line in
                        let fields = line.split(separator: ";", omittingEmptySubsequences: false)
                        return fields.count > 8 && fields[0] == "=" && fields[3].hasPrefix("SoundFit") && fields[8] == "\(httpPort)"
                    }
                    browse.stop()
                }
                #expect(!found.isEmpty, "avahi-browse does not list SoundFit's _oscjson._tcp on port \(httpPort)")
                print("avahi-browse: \(found.first ?? "")")
                #expect(!rig.soundfit.process.standardError.contains("not advertised"), "\(rig.soundfit.process.standardError)")
            } else {
                let deadline = ContinuousClock.now + .seconds(10)
                while !rig.soundfit.process.standardError.contains("zeroconf:"), ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.05)
                }
                Thread.sleep(forTimeInterval: 0.5)
                let lines = rig.soundfit.process.standardError.split(separator: "\n").filter { $0.contains("zeroconf:") && $0.contains("not advertised") }
                #expect(lines.count == 1, "\(rig.soundfit.process.standardError)")
                print("logged: \(lines.first ?? "")")
            }
            try rig.osc.ping()
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
