import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The ceiling (`--max-output` at start, through the calibration at start) is
    /// a safety limit, not a setting. No surface raises the output above it — not in dB SPL, and not
    /// in dBFS by lowering the calibration — while lowering and restoring work. Every case measures
    /// the output peak through JACK with a loud input: a full-scale 1 kHz sine with `/output/gain 12`
    /// (+12 dBFS before the limiter).
    @Suite("Output ceiling") struct OutputCeiling {
        /// `--max-output 90` through the default calibration (100 dB SPL at full scale): −10 dBFS.
        static let startArguments = ["--max-output", "90"]
        static let ceilingDBFS = -10.0

        /// The peak of a full-scale 1 kHz sine through SoundFit, in dBFS: of the whole capture (the
        /// limiter has no attack time, so no sample may pass the limit) and of its steady part
        /// (after the gain's ramp and a raised limit's release).
        static func loudPeaks(_ audio: TestJackClient) throws -> (whole: Double, steady: Double) {
            let captured = try audio.capture([Capture.tone(1000, amplitude: 1)], frames: Capture.captureFrames)
            let whole = captured.map { $0.map(abs).max() ?? 0 }.max() ?? 0
            let steady = captured.map { Capture.steady($0).map(abs).max() ?? 0 }.max() ?? 0
            return (Meter.decibels(Double(whole)), Meter.decibels(Double(steady)))
        }

        /// Measures the loud sine's peaks and checks that they sit at `limit` dBFS: no sample above
        /// it by more than 0.1 dB, and the steady peak within 0.1 dB of it (so a limit too low fails too).
        static func expectPeak(_ audio: TestJackClient, at limit: Double, _ label: String,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
            let peaks = try loudPeaks(audio)
            report("\(label): output peak (limit \(limit) dBFS)", peaks.whole, unit: "dBFS")
            #expect(peaks.whole <= limit + 0.1, "\(label): a sample reached \(peaks.whole) dBFS, limit \(limit)",
                    sourceLocation: sourceLocation)
            #expect(abs(peaks.steady - limit) <= 0.1, "\(label): the steady peak is \(peaks.steady) dBFS, limit \(limit)",
                    sourceLocation: sourceLocation)
        }

        /// `/status`'s ceiling (dB SPL) and limit in force (dBFS).
        static func expectStatus(_ osc: OSCTestClient, ceiling: Double, limit: Double, maximum: Double? = nil,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
            let status = try osc.status()
            #expect(status["output_ceiling_spl"]?.number == ceiling, "\(status)", sourceLocation: sourceLocation)
            #expect(isClose(status["output_limit_dbfs"], limit, tolerance: 1e-4), "\(status)", sourceLocation: sourceLocation)
            if let maximum {
                #expect(status["max_output_spl"]?.number == maximum, "\(status)", sourceLocation: sourceLocation)
            }
        }

        static func makeLoud(_ osc: OSCTestClient) throws {
            expectApplied(try osc.set("/output/gain", .float(12)), "/output/gain", .float(12))
        }

        @Test("OSC: /config/max_output above the ceiling is refused; lowering and restoring work; calibration 100→80 keeps −10 dBFS, 110 tightens it")
        func overOSC() throws {
            try Rig.run(.process(channels: 2, arguments: Self.startArguments)) { rig in
                let audio = try rig.audio()
                try Self.makeLoud(rig.osc)
                try Self.expectStatus(rig.osc, ceiling: 90, limit: Self.ceilingDBFS, maximum: 90)
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "at start")

                // Raising is refused with the reason; nothing changes, in the number or the signal.
                for above: Float in [90.5, 100, 130] {
                    let refused = try rig.osc.ask("/config/max_output", [.float(above)], reply: "/config/max_output")
                    expectErrorReply(refused, for: "/config/max_output", hint: "above the ceiling 90 dB SPL set at start")
                    expectErrorReply(refused, for: "/config/max_output", hint: "--max-output")
                }
                #expect(try rig.osc.ask("/config/max_output", reply: "/config/max_output").arguments == [.float(90), .string("dB SPL")])
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "after refused raises")

                // Lowering works, and restoring up to the ceiling.
                #expect(try rig.osc.ask("/config/max_output", [.float(70)], reply: "/config/max_output").arguments == [.float(70), .string("dB SPL")])
                try Self.expectStatus(rig.osc, ceiling: 90, limit: -30, maximum: 70)
                try Self.expectPeak(audio, at: -30, "lowered to 70 dB SPL")
                #expect(try rig.osc.ask("/config/max_output", [.float(90)], reply: "/config/max_output").arguments == [.float(90), .string("dB SPL")])
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "restored to 90 dB SPL")

                // A lower calibration would put 90 dB SPL at +10 dBFS: accepted, the limit stays at −10 dBFS.
                #expect(try rig.osc.ask("/config/calibration", [.float(80)], reply: "/config/calibration").arguments == [.float(80), .string("dB SPL")])
                try Self.expectStatus(rig.osc, ceiling: 90, limit: Self.ceilingDBFS, maximum: 90)
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "calibration lowered to 80")
                // Lowering the maximum output below the clamp still lowers the signal (60 − 80 = −20 dBFS).
                #expect(try rig.osc.ask("/config/max_output", [.float(60)], reply: "/config/max_output").arguments == [.float(60), .string("dB SPL")])
                try Self.expectPeak(audio, at: -20, "calibration 80, maximum output 60")
                #expect(try rig.osc.ask("/config/max_output", [.float(90)], reply: "/config/max_output").arguments == [.float(90), .string("dB SPL")])
                // A higher calibration tightens the limit (90 − 110 = −20 dBFS); back at 100 it is the start's.
                #expect(try rig.osc.ask("/config/calibration", [.float(110)], reply: "/config/calibration").arguments == [.float(110), .string("dB SPL")])
                try Self.expectStatus(rig.osc, ceiling: 90, limit: -20)
                try Self.expectPeak(audio, at: -20, "calibration raised to 110")
                #expect(try rig.osc.ask("/config/calibration", [.float(100)], reply: "/config/calibration").arguments == [.float(100), .string("dB SPL")])
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "calibration back at 100")

                // OSC over TCP answers the same.
                let tcp = try OSCTCPTestClient(port: try #require(rig.ready.oscTCPPort, "\(rig.ready.fields)"))
                #expect(tcp.send("/config/max_output", .float(100)))
                let refused = try tcp.waitFor("/error over TCP") { $0.address == "/error" || $0.address == "/config/max_output" }
                expectErrorReply(refused, for: "/config/max_output", hint: "above the ceiling 90 dB SPL")
                #expect(tcp.send("/config/max_output", .float(75)))
                let lowered = try tcp.waitFor("/config/max_output over TCP") { $0.address == "/error" || $0.address == "/config/max_output" }
                #expect(lowered.arguments == [.float(75), .string("dB SPL")], "\(lowered)")
                try Self.expectPeak(audio, at: -25, "TCP: lowered to 75 dB SPL")
            }
        }

        /// Sends `messages` over the WebSocket with `Tests/Scripts/osc_over_websocket.py`; returns
        /// each answer's address and arguments (JSON).
        static func sendOverWebSocket(_ rig: SoundFitRig, _ messages: [String]) throws -> [(String, [Any])] {
            let httpPort = try #require(rig.ready.httpPort, "the ready line names no HTTP port: \(rig.ready.fields)")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Scripts/osc_over_websocket.py").path
            let client = try ChildProcess(label: "osc_over_websocket.py", executable: "/usr/bin/env",
                                          arguments: ["python3", script, "--http", "\(httpPort)"] + messages)
            defer { client.stop() }
            #expect(client.waitForExit(timeout: .seconds(60)), "osc_over_websocket.py did not finish")
            #expect(client.termination?.status == 0, "\(client.standardOutput)\n\(client.standardError)")
            return try client.standardOutput.split(separator: "\n").map { line in
                let parts = line.split(separator: "\t", maxSplits: 1)
                let arguments = try JSONSerialization.jsonObject(with: Data((parts.count > 1 ? parts[1] : "[]").utf8)) as? [Any]
                return (String(parts[0]), arguments ?? [])
            }
        }

        @Test("WebSocket (OSC over WebSocket): a raise is refused with the ceiling named; calibration 80 keeps −10 dBFS; lowering works")
        func overWebSocket() throws {
            let rig = try Rig.start(.process(channels: 2, arguments: Self.startArguments))
            defer { rig.stop() }
            let audio = try rig.audio()
            try Self.makeLoud(rig.osc)

            let raised = try Self.sendOverWebSocket(rig, ["/config/max_output,f:130", "/config/max_output"])
            #expect(raised.count == 2, "\(raised)")
            #expect(raised.first?.0 == "/error", "\(raised)")
            #expect(raised.first.map { "\($0.1)".contains("above the ceiling 90 dB SPL") } == true, "\(raised)")
            #expect(raised.last.map { $0.0 == "/config/max_output" && ($0.1.first as? NSNumber)?.doubleValue == 90 } == true, "\(raised)")
            try Self.expectPeak(audio, at: Self.ceilingDBFS, "WebSocket: after a refused raise to 130")

            let calibrated = try Self.sendOverWebSocket(rig, ["/config/calibration,f:80"])
            #expect(calibrated.first.map { $0.0 == "/config/calibration" && ($0.1.first as? NSNumber)?.doubleValue == 80 } == true,
                    "\(calibrated)")
            try Self.expectStatus(rig.osc, ceiling: 90, limit: Self.ceilingDBFS)
            try Self.expectPeak(audio, at: Self.ceilingDBFS, "WebSocket: calibration lowered to 80")

            let lowered = try Self.sendOverWebSocket(rig, ["/config/max_output,f:65"])
            #expect(lowered.first.map { $0.0 == "/config/max_output" && ($0.1.first as? NSNumber)?.doubleValue == 65 } == true,
                    "\(lowered)")
            try Self.expectPeak(audio, at: -15, "WebSocket: calibration 80, maximum output 65")
        }

        @Test("MIDI: the ceiling and the calibration cannot be mapped; a CC mapped to /output/gain at +12 dB stays at the ceiling")
        func overMIDI() throws {
            let rig = try Rig.start(.process(channels: 2, arguments: Self.startArguments))
            defer { rig.stop() }
            for address in ["/config/max_output", "/config/calibration"] {
                expectErrorReply(try rig.osc.ask("/midi/map", [.string(address), .int(1), .int(7)], reply: "/midi/mapped"),
                                 for: "/midi/map", hint: address)
                expectErrorReply(try rig.osc.ask("/midi/learn", [.string(address)], reply: "/midi/learning"),
                                 for: "/midi/learn", hint: address)
            }
            _ = try rig.osc.ask("/midi/map", [.string("/output/gain"), .int(1), .int(7)], reply: "/midi/mapped")
            let fader = try TestJackClient(server: rig.server.name, name: "sfmidi", roles: .midiSource)
            defer { fader.close() }
            try fader.connectMIDI(toSoundFit: rig.ready.client, osc: rig.osc)
            fader.controlChange(channel: 1, controller: 7, value: 127)
            try fader.waitUntilSent()
            #expect(isClose(try rig.osc.pollQuery("/output/gain") { isClose($0, 12, tolerance: 1e-3) }, 12, tolerance: 1e-3))
            try Self.expectPeak(try rig.audio(), at: Self.ceilingDBFS, "MIDI: CC 7 = 127 (+12 dB)")
        }

        @Test("Patches: a patch file carrying /config/max_output or /config/calibration is refused at load; a +12 dB patch stays at the ceiling")
        func patches() throws {
            let patches = try UniqueName.temporaryDirectory("sf-patches")
            defer { try? FileManager.default.removeItem(at: patches) }
            let repositoryPatches = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("patches")
            let transparent = try JSONFile.object(at: repositoryPatches.appendingPathComponent("00-transparent.json"))
            try JSONFile.write(transparent, to: patches.appendingPathComponent("00-transparent.json"))
            func patch(number: Int, name: String, _ extra: [String: Any]) -> [String: Any] {
                var patch = transparent
                patch["number"] = number
                patch["name"] = name
                var parameters = patch["parameters"] as! [String: Any]
                parameters["/output/gain"] = 12
                parameters.merge(extra) { $1 }
                patch["parameters"] = parameters
                return patch
            }
            try JSONFile.write(patch(number: 1, name: "Loud", [:]), to: patches.appendingPathComponent("01-loud.json"))
            try JSONFile.write(patch(number: 2, name: "Louder", ["/config/max_output": 130]),
                               to: patches.appendingPathComponent("02-louder.json"))
            try JSONFile.write(patch(number: 3, name: "Recalibrated", ["/config/calibration": 80]),
                               to: patches.appendingPathComponent("03-recalibrated.json"))

            let rig = try Rig.start(.stateful(channels: 2, arguments: Self.startArguments + ["--patches-dir", patches.path]))
            defer { rig.stop() }
            let osc = try rig.osc
            let log = try rig.soundfit.log
            for (file, address) in [("02-louder.json", "/config/max_output"), ("03-recalibrated.json", "/config/calibration")] {
                #expect(log.split(separator: "\n").contains { $0.contains(file) && $0.contains(address) },
                        "the log does not refuse \(file): \(log)")
                expectErrorReply(try osc.ask("/patch/load", [.string(file == "02-louder.json" ? "Louder" : "Recalibrated")],
                                             reply: "/patch/current"), for: "/patch/load")
            }
            let loaded = try osc.ask("/patch/load", [.string("Loud")], reply: "/patch/current")
            #expect(loaded.address == "/patch/current", "\(loaded)")
            #expect(isClose(try osc.pollQuery("/output/gain") { isClose($0, 12, tolerance: 1e-3) }, 12, tolerance: 1e-3))
            try Self.expectStatus(osc, ceiling: 90, limit: Self.ceilingDBFS, maximum: 90)
            try Self.expectPeak(try rig.audio(), at: Self.ceilingDBFS, "patch 'Loud' (+12 dB)")
        }

        @Test("State import and restart: an imported (or OSC-saved) calibration of 80 does not lift the limit; only --calibration on the command line moves it")
        func stateImportAndRestart() throws {
            try Rig.run(.stateful(channels: 2, arguments: Self.startArguments)) { rig in
                var osc = try rig.osc
                try Self.makeLoud(osc)
                waitUntilSaved(rig.stateDirectory, "/output/gain", 12)

                // A calibration saved from a surface, then a restart.
                _ = try osc.ask("/config/calibration", [.float(80)], reply: "/config/calibration")
                osc = try rig.restart().osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(80), .string("dB SPL")])
                try Self.expectStatus(osc, ceiling: 90, limit: Self.ceilingDBFS, maximum: 90)
                try Self.expectPeak(try rig.audio(), at: Self.ceilingDBFS, "restart after /config/calibration 80")

                // An exported state edited to calibration 80 and imported, then a start.
                _ = try osc.ask("/config/calibration", [.float(100)], reply: "/config/calibration")
                let exported = try SoundFitCommandLine.run(["state", "export", "--state-dir", rig.stateDirectory.path])
                #expect(exported.succeeded, "\(exported.standardError)")
                rig.stopSoundFit()
                var object = try #require(try JSONSerialization.jsonObject(with: Data(exported.standardOutput.utf8)) as? [String: Any])
                object["calibration_db_spl"] = 80
                let file = rig.stateDirectory.appendingPathComponent("exported.json")
                try JSONFile.write(object, to: file)
                let imported = try SoundFitCommandLine.run(["state", "import", "--state-dir", rig.stateDirectory.path, file.path])
                #expect(imported.succeeded, "\(imported.standardError)")
                osc = try rig.start().osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(80), .string("dB SPL")])
                #expect(isClose(try osc.query("/output/gain"), 12, tolerance: 1e-3))
                try Self.expectStatus(osc, ceiling: 90, limit: Self.ceilingDBFS)
                try Self.expectPeak(try rig.audio(), at: Self.ceilingDBFS, "start after importing calibration 80")
                #expect(try osc.ask("/config/max_output", [.float(100)], reply: "/config/max_output").address == "/error")

                // Control: the person starting SoundFit chooses with --calibration; 90 − 80 = +10 dBFS
                // lets the +12 dBFS sine through up to +10 dBFS (JACK carries floats above full scale).
                osc = try rig.restart(arguments: ["--calibration", "80"]).osc
                try Self.expectStatus(osc, ceiling: 90, limit: 10)
                try Self.expectPeak(try rig.audio(), at: 10, "--calibration 80 on the command line")
            }
        }

        @Test("NSM open: a session directory whose document.json holds calibration 80 does not lift the limit")
        func nsmOpen() throws {
            try Rig.run(.server(directory: "nsm-ceiling")) { rig in
                let path = rig.directory.appendingPathComponent("SoundFit.nCEIL")
                try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
                try JSONFile.write(["format": "soundfit.document", "version": 1, "calibration_db_spl": 80, "channels": 2,
                                    "osc": ["host": "127.0.0.1", "port": 0, "allow": [String]()]] as [String: Any],
                                   to: path.appendingPathComponent("document.json"))

                let nsm = try TestNSMServer()
                let process = try ChildProcess(
                    label: "soundfit", executable: try SoundFitBinary.path(),
                    arguments: ["run", "--osc-port", "0", "--http-port", "0", "--server", rig.server.name, "--no-start-server"]
                        + Self.startArguments,
                    environment: [NSMTestProtocol.environmentVariable: nsm.url])
                defer { process.stop() }
                _ = try nsm.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }
                try nsm.send("/reply", .string("/nsm/server/announce"), .string("hello"), .string("test-nsm"), .string(":server-control:"))
                try nsm.send("/nsm/client/open", .string(path.path), .string("SoundFit"), .string("SoundFit.nCEIL"))
                let opened = try nsm.waitFor("/reply to open") { $0.address == "/reply" || $0.address == "/error" }.match
                #expect(opened.address == "/reply", "\(opened); \(process.standardError)")
                let ready = try #require(process.waitForOutput(timeout: .seconds(30), ReadyLine.find(in:)), "\(process.standardError)")
                let osc = try OSCTestClient.inSession(port: ready.oscPort)
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(80), .string("dB SPL")])
                try Self.makeLoud(osc)
                try Self.expectStatus(osc, ceiling: 90, limit: Self.ceilingDBFS, maximum: 90)
                let audio = try TestJackClient(server: rig.server.name, channels: 2)
                defer { audio.close() }
                try audio.connect(toClient: ready.client)
                try Self.expectPeak(audio, at: Self.ceilingDBFS, "NSM session with calibration 80")
                expectErrorReply(try osc.ask("/config/max_output", [.float(110)], reply: "/config/max_output"),
                                 for: "/config/max_output", hint: "ceiling")
            }
        }
    }
}
