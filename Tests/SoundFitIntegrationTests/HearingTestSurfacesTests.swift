import Foundation
import Glibc
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// What a test taker could watch tells nothing of when a tone comes; the
    /// gate keeps unreliable and incomplete results; the record holds every presentation; the
    /// FHIR export validates (fhir.resources) and round-trips.
    @Suite("Hearing test: blind surfaces, gate, record, FHIR") struct HearingTestSurfaces {
        /// Gaps of at least 0.8 s: the progress report after a window precedes the next onset by
        /// more than the 0.5 s the surface check looks back.
        static let timing: [OSCValue] = [
            .string("tone_seconds"), .float(0.2), .string("window_start"), .float(0.05),
            .string("window_end"), .float(0.45), .string("gap_min"), .float(0.8), .string("gap_max"), .float(1.2),
        ]
        static let windowEnd = 0.45
        static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scripts")
        /// The venv scripts/setup.sh makes for the suite's PyPI packages (fhir.resources).
        static let venvPython = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-python/bin/python").path

        static func json(_ data: Data) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        static func date(_ text: String) -> Date? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text)
        }

        /// The one record the test kept in the state directory.
        static func keptRecord(_ rig: SoundFitRig) throws -> [String: Any] {
            let directory = rig.soundfit.stateDirectory.appendingPathComponent("hearing-tests")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
            try #require(files.count == 1, "\(files)")
            return try json(try Data(contentsOf: directory.appendingPathComponent(files[0])))
        }

        /// `validate_fhir.py FILE`'s output: the library's reading of the export.
        static func validated(_ file: URL) throws -> [String: Any] {
            try #require(FileManager.default.isExecutableFile(atPath: venvPython),
                         "no fhir.resources venv at \(venvPython): run scripts/setup.sh with SOUNDFIT_SETUP_TESTS=1")
            let validator = try ChildProcess(label: "validate_fhir.py", executable: venvPython,
                                             arguments: [scripts.appendingPathComponent("validate_fhir.py").path, file.path])
            defer { validator.stop() }
            #expect(validator.waitForExit(timeout: .seconds(60)))
            try #require(validator.termination?.status == 0, "\(validator.standardOutput)\n\(validator.standardError)")
            return try json(Data(validator.standardOutput.utf8))
        }

        @Test("every surface (soundfit test in a pty as starter, a subscriber, a WebSocket LISTENing on every node) is silent around tones and catch trials alike; the record holds every tone at its level; the export validates")
        func blindSurfacesRecordAndExport() throws {
            let rig = try Rig.start(.listening(SimulatedListener.standard(left: "N2", right: "N3"), seed: 500,
                                               timing: Self.timing))
            defer { rig.stop() }
            let httpPort = try #require(rig.rig.ready.httpPort)
            let directory = try UniqueName.temporaryDirectory("sf-surfaces")
            defer { try? FileManager.default.removeItem(at: directory) }
            let log = directory.appendingPathComponent("surfaces.json"), export = directory.appendingPathComponent("audiogram.fhir.json")
            let recorder = try ChildProcess(
                label: "hearing_surfaces.py", executable: "/usr/bin/env",
                arguments: ["python3", Self.scripts.appendingPathComponent("hearing_surfaces.py").path, "--http", "\(httpPort)",
                            "--osc", "\(rig.rig.ready.oscPort)", "--out", log.path, "--", try SoundFitBinary.path(), "test",
                            "--osc-port", "\(rig.rig.ready.oscPort)", "--ear", "both", "--hz", "1000", "4000",
                            "--listener", "P017", "--seed", "5", "--export", export.path])
            defer { recorder.stop() }
            #expect(recorder.waitForExit(timeout: .seconds(330)), "the recorder did not end: \(recorder.standardError)")
            try #require(recorder.termination?.status == 0, "\(recorder.standardOutput)\n\(recorder.standardError)")
            let surfaces = try Self.json(try Data(contentsOf: log))
            let terminal = (surfaces["terminal"] as? [[Any]]) ?? []
            let terminalText = terminal.compactMap { $0.last as? String }.joined(separator: "\n")
            #expect(surfaces["exit"] as? Int == 0, "soundfit test: \(terminalText)")

            // Every moment anything reached a surface (Unix seconds).
            var outputs: [(surface: String, time: Double)] = terminal.compactMap { ($0.first as? Double).map { ("terminal", $0) } }
            for surface in ["subscriber", "websocket"] {
                outputs += ((surfaces[surface] as? [[Any]]) ?? []).compactMap { ($0.first as? Double).map { (surface, $0) } }
            }
            report("surface outputs recorded", Double(outputs.count), unit: "messages")
            report("nodes LISTENed to", Double(surfaces["listened"] as? Int ?? 0), unit: "nodes")

            // The tones as measured on the JACK outputs, and the catch trials from the record.
            let record = try Self.keptRecord(rig.rig)
            let trials = try #require(record["trials"] as? [[String: Any]])
            let tones = rig.listener.presentations
            let catchOnsets = trials.filter { $0["catch_trial"] as? Bool == true }
                .compactMap { ($0["time"] as? String).flatMap(Self.date)?.timeIntervalSince1970 }
            try #require(tones.count >= 20, "\(tones.count) tones")
            func cued(_ onset: Double) -> Bool {
                outputs.contains { $0.time >= onset - 0.5 && $0.time <= onset + Self.windowEnd }
            }
            let cuedTones = tones.filter { cued($0.onset.timeIntervalSince1970) }.count
            let cuedCatches = catchOnsets.filter(cued).count
            let toneRate = Double(cuedTones) / Double(tones.count)
            let catchRate = catchOnsets.isEmpty ? 0 : Double(cuedCatches) / Double(catchOnsets.count)
            report("tones with output from onset − 0.5 s to the window's end", toneRate * 100, unit: "% of \(tones.count)")
            report("catch trials with output then", catchRate * 100, unit: "% of \(catchOnsets.count)")
            #expect(toneRate <= 0.05)
            #expect(abs(toneRate - catchRate) <= 0.05)
            #expect(!catchOnsets.isEmpty, "no catch trial in \(trials.count) presentations")
            // What fell near a tone, if anything (the criterion is the rates above).
            for output in outputs where tones.contains(where: { output.time >= $0.onset.timeIntervalSince1970 - 0.5
                                                                && output.time <= $0.onset.timeIntervalSince1970 + Self.windowEnd }) {
                print("\(output.surface) output at \(output.time) near a tone")
            }
            // The quietest margins: the silence before each onset and after each window end.
            let times = outputs.map(\.time).sorted()
            let leads = tones.compactMap { tone in times.last { $0 < tone.onset.timeIntervalSince1970 }
                .map { tone.onset.timeIntervalSince1970 - $0 } }
            let lags = tones.compactMap { tone in times.first { $0 > tone.onset.timeIntervalSince1970 }
                .map { $0 - tone.onset.timeIntervalSince1970 - Self.windowEnd } }
            report("smallest silence on any surface before a tone's onset", leads.min() ?? .nan, unit: "s")
            report("first output after a tone's window end, smallest delay", lags.min() ?? .nan, unit: "s")
            // No level ever reached a surface.
            #expect(!terminalText.contains("level"), "\(terminalText)")

            // The record: every tone the listener measured, in order (a recorded tone the
            // listener did not measure is skipped), at its level (±1 dB), in dB HL and through the
            // calibration in dBFS; and how far the listener's onsets are from the runner's.
            let recordedTones = trials.filter { $0["catch_trial"] as? Bool == false }
            var worst = 0.0, skipped = 0, next = 0
            var onsetDifferences: [Double] = []
            for measured in tones {
                let measuredDBFS = measured.level - rig.listener.calibration.fullScaleSPL
                    + rig.listener.calibration.earphone.retspl(at: measured.frequency)
                func matches(_ recorded: [String: Any]) -> Bool {
                    recorded["ear"] as? String == measured.ear.rawValue && recorded["hz"] as? Double == measured.frequency
                        && abs((recorded["db_hl"] as? Double ?? .nan) - measured.level) <= 1
                        && abs((recorded["dbfs"] as? Double ?? .nan) - measuredDBFS) <= 1
                }
                guard let index = recordedTones[next...].firstIndex(where: matches) else {
                    Issue.record("the listener's tone \(measured) is not in the record (from presentation \(next))")
                    continue
                }
                skipped += index - next
                next = index + 1
                let recorded = recordedTones[index]
                worst = max(worst, abs((recorded["db_hl"] as? Double ?? 0) - measured.level),
                            abs((recorded["dbfs"] as? Double ?? 0) - measuredDBFS))
                if let time = (recorded["time"] as? String).flatMap(Self.date) {
                    onsetDifferences.append(measured.onset.timeIntervalSince(time))
                }
                if recorded["response"] as? String == "heard", let latency = recorded["latency_s"] as? Double {
                    #expect(latency >= 0.05 && latency <= Self.windowEnd, "latency \(latency)")
                }
            }
            // Seen once in 62 on the loaded machine: the runner saw the onset, the listener did
            // not measure the tone (why is not established); more than two would be a fault.
            report("recorded tones the listener did not measure", Double(skipped + recordedTones.count - next), unit: "tones")
            #expect(skipped + recordedTones.count - next <= 2, "record \(recordedTones.count) tones, listener \(tones.count)")
            let sorted = onsetDifferences.sorted()
            report("listener onset − recorded onset, median", sorted.isEmpty ? .nan : sorted[sorted.count / 2], unit: "s")
            report("listener onset − recorded onset, largest", sorted.max(by: { abs($0) < abs($1) }) ?? .nan, unit: "s")
            report("record vs JACK: largest level difference", worst, unit: "dB")
            #expect(record["seed"] is String && record["listener_id"] as? String == "P017")
            #expect(record["software_version"] as? String == SoundFitVersion.current)
            #expect(record["sample_rate_hz"] as? Double == rig.listener.sampleRate)
            #expect((record["reference_levels"] as? [String: Any])?["retspl_db_spl"] is [Any])

            // The gate: 1 and 4 kHz only is incomplete, so it is kept, not applied.
            #expect(terminalText.contains("done profile not_submitted") && terminalText.contains("incomplete"), "\(terminalText)")
            let profile = try rig.rig.osc.ask("/profile/audiogram", reply: "/profile/audiogram")
            #expect(profile.address == "/error", "an incomplete result became the profile: \(profile)")

            // The export soundfit test wrote: valid for fhir.resources, the measured audiogram.
            let validated = try Self.validated(export)
            #expect(validated["code"] as? String == "89015-2")
            let audiogram = try #require(validated["audiogram"] as? [String: [String: [Any]]])
            for ear in try #require(record["ears"] as? [[String: Any]]) {
                let name = try #require(ear["ear"] as? String)
                for threshold in (ear["thresholds"] as? [[String: Double]]) ?? [] {
                    let exported = audiogram[name]?[String(Int(threshold["hz"]!))]
                    #expect(exported?.first as? Double == threshold["db_hl"] && exported?.last is NSNull, "\(name): \(String(describing: exported))")
                }
                for hz in (ear["no_response_hz"] as? [Double]) ?? [] {
                    #expect(audiogram[name]?[String(Int(hz))]?.last as? String == ">", "\(name) \(hz) Hz: no response unmarked")
                }
            }
            // The same document over HTTP (through the access checks: a foreign Host is refused).
            let served = try PlainHTTP.get(port: httpPort, "/hearing-test/fhir")
            let written = Array(try Data(contentsOf: export))
            #expect(served.status == 200 && served.body == written, "HTTP \(served.status)")
            let foreign = try RawHTTPConnection(port: httpPort)
            _ = foreign.send(RawHTTPConnection.request("/hearing-test/fhir", host: "evil.example"))
            #expect(foreign.readResponse()?.status == 403)
        }

        @Test("an unreliable result is kept, not applied; /test/submit applies it; its export imports back as the same audiogram")
        func gateSubmitAndImport() throws {
            let timing = Array(HearingTestThroughJack.fastTiming.dropLast(4)) + [.string("gap_min"), .float(0.5), .string("gap_max"), .float(0.8)]
            let rig = try Rig.start(.listening(SimulatedListener.standard(left: "N2"), seed: 510, timing: timing))
            defer { rig.stop() }
            let osc = rig.rig.osc
            osc.sendRaw(OSCWire.encode(OSCTestMessage("/test/start", [.string("left")]
                + HearingTestThroughJack.profileFrequencies.map { .float(Float($0)) } + [.string("seed"), .string("42")])))
            _ = try osc.waitFor("running") { $0.address == "/test/state" || $0.address == "/error" }
            // Eight presses before the first tone (its gap is at least 0.5 s): outside every
            // window, more than the verdict allows (3): unreliable.
            for _ in 0..<8 { osc.send("/test/heard") }
            let end = try osc.waitFor("done", timeout: .seconds(200)) {
                $0.address == "/error" || ($0.address == "/test/state" && ["done", "failed", "cancelled"].contains($0.string(0) ?? ""))
            }
            let outcome = HearingTestThroughJack.TestOutcome(end: end.match, before: end.before)
            #expect(outcome.reliability("left") == "unreliable")
            #expect(end.match.arguments.map(\.stringValue).contains("not_submitted"), "\(end.match)")
            #expect(end.match.arguments.contains { $0.stringValue?.contains("left: unreliable") == true }, "\(end.match)")
            #expect(try osc.ask("/profile/audiogram", reply: "/profile/audiogram").address == "/error", "applied before /test/submit")
            let record = try Self.keptRecord(rig.rig)
            #expect(record["seed"] as? String == "42")

            let submitted = try osc.ask("/test/submit", reply: "/test/state")
            #expect(submitted.arguments.map(\.stringValue) == ["done", "profile", "submitted"], "\(submitted)")
            let measured = outcome.thresholds("left")
            func heldLeft() throws -> [Double: Double] {
                osc.drain()
                osc.send("/profile/audiogram")
                let left = try osc.waitFor("left audiogram") { $0.address == "/profile/audiogram" && $0.string(0) == "left" }.match
                var points: [Double: Double] = [:]
                for index in stride(from: 1, to: left.arguments.count - 1, by: 2) { points[left.number(index)!] = left.number(index + 1)! }
                return points
            }
            #expect(try heldLeft() == measured, "profile vs result \(measured)")

            // Export over OSC, validate, import after another audiogram replaced it: the same points.
            let exported = try osc.ask("/test/export", reply: "/test/export")
            let text = try #require(exported.string(0), "\(exported)")
            let directory = try UniqueName.temporaryDirectory("sf-fhir")
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("audiogram.fhir.json")
            try Data(text.utf8).write(to: file)
            let validated = try Self.validated(file)
            #expect(validated["status"] as? String == "final")
            let other: [OSCValue] = [.string("left"), .float(500), .float(70), .float(1000), .float(70), .float(2000), .float(70), .float(4000), .float(70)]
            _ = try osc.ask("/profile/audiogram", other, reply: "/profile/presets")
            #expect(try heldLeft() != measured)
            osc.drain()
            osc.sendRaw(OSCWire.encode(OSCTestMessage("/test/import", [.string(text)])))
            let imported = try osc.waitFor("import") { $0.address == "/error" || ($0.address == "/profile/audiogram" && $0.string(0) == "left") }
            #expect(imported.match.address == "/profile/audiogram", "\(imported.match)")
            #expect(try heldLeft() == measured, "round trip")
            // A bad document: a clear error.
            let refused = try osc.ask("/test/import", [.string(#"{"resourceType": "Patient"}"#)], reply: "/error")
            #expect(refused.string(1)?.contains("Observation") == true, "\(refused)")
        }
    }
}
