import Foundation
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// Calibration you can do: the calibration tone measured through JACK,
    /// a meter reading that corrects one ear and frequency, its effect on the hearing test's
    /// tones, and the table as document state (restart, export, import).
    @Suite("Calibration through JACK") struct CalibrationThroughJack {
        /// The default calibration: a full-scale sine is 100 dB SPL, so 80 dB SPL is −20 dBFS,
        /// `Capture`'s reference level.
        static let nominal: Float = 80

        /// Plays `/calibration/tone ear hz level` and measures both outputs, dB re −20 dBFS.
        static func measureTone(_ osc: OSCTestClient, _ audio: TestJackClient, ear: String, hz: Double,
                                level: Float = nominal) throws -> (left: Double, right: Double) {
            let reply = try osc.ask("/calibration/tone", [.string(ear), .float(Float(hz)), .float(level)], reply: "/calibration/tone")
            guard reply.address == "/calibration/tone" else { throw IntegrationError("tone refused: \(reply)") }
            return try measurePlaying(audio, hz: hz)
        }

        /// Measures the tone playing now on both outputs.
        static func measurePlaying(_ audio: TestJackClient, hz: Double) throws -> (left: Double, right: Double) {
            let silence = [[Float]](repeating: [Float](repeating: 0, count: Capture.loopFrames), count: 2)
            let captured = try audio.capture(silence, frames: Capture.captureFrames)
            return (Capture.toneLevel(captured[0], frequency: hz), Capture.toneLevel(captured[1], frequency: hz))
        }

        /// `/calibration`'s corrections of `ear`: [hz: dB].
        static func corrections(_ osc: OSCTestClient, _ ear: String) throws -> [Double: Double] {
            let table = try osc.ask("/calibration", reply: "/calibration")
            guard table.address == "/calibration" else { throw IntegrationError("no table: \(table)") }
            var result: [Double: Double] = [:]
            guard let start = (0..<table.arguments.count).first(where: { table.string($0) == ear }) else { return [:] }
            var index = start + 1
            while index + 1 < table.arguments.count, let hz = table.number(index), let db = table.number(index + 1) {
                result[hz] = db
                index += 2
            }
            return result
        }

        @Test("The calibration tone is the nominal SPL through the calibration ±0.2 dB; a +6 dB reading at 4 kHz left plays that ear 6 dB lower, the right unchanged; bad inputs answered")
        func toneAndCorrection() throws {
            let rig = try Rig.start(.stateful())
            defer { rig.stop() }
            let osc = try rig.osc
            let audio = try rig.audio()

            for (ear, hz) in [("left", 1000.0), ("right", 1000), ("left", 4000), ("right", 4000)] {
                let level = try Self.measureTone(osc, audio, ear: ear, hz: hz)
                let (played, silent) = ear == "left" ? (level.left, level.right) : (level.right, level.left)
                report("calibration tone \(ear) \(Int(hz)) Hz, 80 dB SPL, re −20 dBFS", played)
                #expect(abs(played) <= 0.2, "\(ear) \(hz): \(played) dB")
                #expect(silent < -80, "the other ear plays \(silent) dB")
            }

            // The meter read 86 on the left at 4 kHz while 80 was meant.
            _ = try Self.measureTone(osc, audio, ear: "left", hz: 4000)
            let measured = try osc.ask("/calibration/measured", [.string("left"), .float(4000), .float(86)],
                                       reply: "/calibration/measured")
            #expect(measured.address == "/calibration/measured" && measured.number(2) == 6, "\(measured)")
            // The tone still playing was played again through the correction.
            let replayed = try Self.measurePlaying(audio, hz: 4000)
            report("left 4 kHz after +6 dB reading, replayed", replayed.left)
            #expect(abs(replayed.left + 6) <= 0.5)
            let next = try Self.measureTone(osc, audio, ear: "left", hz: 4000)
            report("left 4 kHz, next tone after +6 dB reading", next.left)
            #expect(abs(next.left + 6) <= 0.5)
            let right = try Self.measureTone(osc, audio, ear: "right", hz: 4000)
            report("right 4 kHz after the left reading", right.right)
            #expect(abs(right.right) <= 0.2)
            // 2 kHz on the left is held flat from the only point (4 kHz): also 6 dB lower.
            let flat = try Self.measureTone(osc, audio, ear: "left", hz: 2000)
            #expect(abs(flat.left + 6) <= 0.5, "left 2 kHz: \(flat.left)")
            #expect(try Self.corrections(osc, "left") == [4000: 6])

            // A hearing test is refused while the tone plays, and the tone while a test runs.
            let start = try osc.ask("/test/start", [.string("left")], reply: "/error")
            #expect(start.string(1)?.contains("calibration tone") == true, "\(start)")
            let stop = try osc.ask("/calibration/stop", reply: "/calibration/stop")
            #expect(stop.address == "/calibration/stop")
            let silent = try Self.measurePlaying(audio, hz: 4000)
            #expect(silent.left < -80 && silent.right < -80, "still playing after stop: \(silent)")

            // Bad inputs: every one answered with an /error that says why.
            for (address, arguments, expected) in [
                ("/calibration/tone", [OSCValue.string("left"), .float(1000), .float(110)], "output safety limit 100 dB SPL"),
                ("/calibration/tone", [.string("middle"), .float(1000), .float(70)], "left or right"),
                ("/calibration/tone", [.string("left"), .float(20), .float(70)], "125…8000"),
                ("/calibration/tone", [.string("left"), .float(1000)], "expects ,s ear ,f hz ,f db_spl"),
                ("/calibration/measured", [.string("right"), .float(500), .float(70)], "no calibration tone was played"),
                ("/calibration/stop", [], "no calibration tone is playing"),
                ("/calibration/reset", [.int(1)], "takes no arguments"),
            ] as [(String, [OSCValue], String)] {
                let answer = try osc.ask(address, arguments, reply: "/error")
                #expect(answer.address == "/error" && answer.string(0) == address
                    && answer.string(1)?.contains(expected) == true, "\(address) \(arguments): \(answer)")
            }
            // A reading 50 dB off is a wrong setup, not an earphone.
            _ = try Self.measureTone(osc, audio, ear: "right", hz: 500, level: 40)
            let wild = try osc.ask("/calibration/measured", [.string("right"), .float(500), .float(95)], reply: "/error")
            #expect(wild.string(1)?.contains("outside -40…40") == true, "\(wild)")
            _ = try osc.ask("/calibration/stop", reply: "/calibration/stop")

            // Reset clears the table; the next tone is uncorrected again.
            let reset = try osc.ask("/calibration/reset", reply: "/calibration")
            #expect(reset.arguments.count == 4, "\(reset)")  // earphone NAME left right
            let cleared = try Self.measureTone(osc, audio, ear: "left", hz: 4000)
            #expect(abs(cleared.left) <= 0.2)
            _ = try osc.ask("/calibration/stop", reply: "/calibration/stop")
        }

        @Test("The hearing test's 4 kHz left-ear tones are 6 dB lower after a +6 dB reading there; the right ear's are not")
        func hearingTestTonesFollowTheTable() throws {
            let rig = try Rig.start(.process())
            defer { rig.stop() }
            let config = try rig.osc.ask("/test/config", HearingTestThroughJack.fastTiming, reply: "/test/config")
            #expect(config.address == "/test/config")
            _ = try rig.osc.ask("/calibration/tone", [.string("left"), .float(4000), .float(80)], reply: "/calibration/tone")
            let measured = try rig.osc.ask("/calibration/measured", [.string("left"), .float(4000), .float(86)],
                                           reply: "/calibration/measured")
            #expect(measured.number(2) == 6, "\(measured)")
            _ = try rig.osc.ask("/calibration/stop", reply: "/calibration/stop")

            // A listener who hears everything: the first presentation of each ear is the
            // procedure's starting level, the same nominal dB HL on both ears. The virtual
            // listener reads levels through the uncorrected calibration.
            let everything = SimulatedListener(thresholds: [.left: [(1000, -10)], .right: [(1000, -10)]], lapses: 0)
            let listener = try VirtualListener(
                server: rig.server.name, soundfitClient: rig.ready.client, oscPort: rig.ready.oscPort,
                listener: everything, responseWindowSeconds: HearingTestThroughJack.responseWindowSeconds, seed: 22)
            defer { listener.stop() }
            rig.osc.send("/test/start", .string("both"), .float(4000))
            let deadline = ContinuousClock.now + .seconds(60)
            func first(_ ear: Ear) -> VirtualListener.Presentation? {
                listener.presentations.first { $0.ear == ear && $0.frequency == 4000 }
            }
            while first(.left) == nil || first(.right) == nil, ContinuousClock.now < deadline {
                // The listener measures tones on its own thread.
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
            }
            // No calibration tone while the test runs.
            let refused = try rig.osc.ask("/calibration/tone", [.string("left"), .float(1000), .float(70)], reply: "/error")
            #expect(refused.string(0) == "/calibration/tone" && refused.string(1)?.contains("a hearing test is running") == true,
                    "\(refused)")
            _ = try? rig.osc.ask("/test/cancel", reply: "/test/state")
            let left = try #require(first(.left)), right = try #require(first(.right))
            report("hearing test 4 kHz first tone, left − right", left.level - right.level)
            #expect(abs(left.level - right.level + 6) <= 0.5, "left \(left.level), right \(right.level)")
            // Every left 4 kHz presentation sits 6 dB below a level the right ear could be given:
            // the nominal levels are whole numbers of dB, so the left ones are off them by 6 dB.
            for presentation in listener.presentations where presentation.frequency == 4000 {
                let expectedOffset = presentation.ear == .left ? -6.0 : 0
                let nominal = presentation.level - expectedOffset
                #expect(abs(nominal - nominal.rounded()) <= 0.5, "\(presentation)")
            }
        }

        @Test("A reading regenerates the session's preset for the corrected ear (subscribers hear calibration_changed); a reset again")
        func presetsFollowTheTable() throws {
            let rig = try Rig.start(.process(channels: 2))
            defer { rig.stop() }
            let osc = rig.osc
            _ = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            let subscriber = try OSCTestClient.subscribed(to: rig.ready.oscPort)
            _ = try osc.ask("/calibration/tone", [.string("left"), .float(2000), .float(70)], reply: "/calibration/tone")
            _ = try osc.ask("/calibration/measured", [.string("left"), .float(2000), .float(75)], reply: "/calibration/measured")
            _ = try osc.ask("/calibration/stop", reply: "/calibration/stop")
            let invalidated = try subscriber.waitFor("/invalidated") { $0.address == "/invalidated" }.match
            #expect(invalidated.arguments == [.string("/processing/preset"), .string("calibration_changed")], "\(invalidated)")
            let state = try osc.ask("/state", [.string("/processing/preset")], reply: "/state")
            #expect(state.arguments.prefix(2) == [.string("/processing/preset"), .string("applied")], "\(state)")
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            _ = try osc.ask("/calibration/reset", reply: "/calibration")
            let again = try subscriber.waitFor("/invalidated") { $0.address == "/invalidated" }.match
            #expect(again.arguments == [.string("/processing/preset"), .string("calibration_changed")], "\(again)")
        }

        @Test("The calibration table and the earphone survive a restart, and go with state export and import")
        func documentState() throws {
            let rig = try Rig.start(.stateful())
            defer { rig.stop() }
            var osc = try rig.osc
            _ = try osc.ask("/calibration/tone", [.string("right"), .float(2000), .float(70)], reply: "/calibration/tone")
            _ = try osc.ask("/calibration/measured", [.string("right"), .float(2000), .float(67.5)], reply: "/calibration/measured")
            _ = try osc.ask("/calibration/stop", reply: "/calibration/stop")
            let earphone = try osc.ask("/test/earphone", [.string("DD65v2")], reply: "/test/earphone")
            #expect(earphone.string(0) == "DD65v2", "\(earphone)")
            let unknown = try osc.ask("/test/earphone", [.string("TDH-50")], reply: "/error")
            #expect(unknown.string(1)?.contains("unknown earphone") == true, "\(unknown)")
            let file = rig.stateDirectory.appendingPathComponent("calibration.json")
            let kept = try String(contentsOf: file, encoding: .utf8)
            #expect(kept.contains("\"DD65v2\"") && kept.contains("-2.5"), "\(kept)")

            try rig.restart()
            osc = try rig.osc
            #expect(try Self.corrections(osc, "right") == [2000: -2.5])
            let table = try osc.ask("/calibration", reply: "/calibration")
            #expect(table.string(1) == "DD65v2", "\(table)")
            // /test/config picks a known table by name too, and keeps it.
            let config = try osc.ask("/test/config", [.string("earphone"), .string("ER-3A")], reply: "/test/config")
            #expect(config.arguments.contains(.string("ER-3A")), "\(config)")
            let badName = try osc.ask("/test/config", [.string("earphone"), .string("TDH-49")], reply: "/error")
            #expect(badName.string(1)?.contains("DD45") == true, "\(badName)")
            try rig.restart()
            osc = try rig.osc
            #expect(try osc.ask("/calibration", reply: "/calibration").string(1) == "ER-3A")
            // --earphone on the command line wins over the kept table.
            try rig.restart(arguments: ["--earphone", "DD45"])
            osc = try rig.osc
            #expect(try osc.ask("/calibration", reply: "/calibration").string(1) == "DD45")
            _ = try osc.ask("/test/earphone", [.string("DD65v2")], reply: "/test/earphone")

            // Export, then import into a fresh state directory, and start there.
            rig.stopSoundFit()
            let exported = try SoundFitCommandLine.run(["state", "export", "--state-dir", rig.stateDirectory.path])
            #expect(exported.succeeded, "\(exported.standardError)")
            let document = try JSONSerialization.jsonObject(with: Data(exported.standardOutput.utf8)) as? [String: Any]
            let calibration = try #require(document?["calibration"] as? [String: Any])
            let corrections = try #require(calibration["corrections"] as? [String: Any])
            let right = try #require(corrections["right"] as? [[String: Any]])
            #expect(right.count == 1 && right[0]["hz"] as? Double == 2000 && right[0]["db"] as? Double == -2.5, "\(right)")
            #expect((calibration["earphone"] as? [String: Any])?["name"] as? String == "DD65v2")

            let other = try Rig.start(.stateful(start: false))
            defer { other.stop() }
            let exportFile = other.stateDirectory.appendingPathComponent("export.json")
            try Data(exported.standardOutput.utf8).write(to: exportFile)
            let imported = try SoundFitCommandLine.run(["state", "import", "--state-dir", other.stateDirectory.path, exportFile.path])
            #expect(imported.succeeded, "\(imported.standardError)")
            try other.start()
            let otherOSC = try other.osc
            #expect(try Self.corrections(otherOSC, "right") == [2000: -2.5])
            #expect(try otherOSC.ask("/calibration", reply: "/calibration").string(1) == "DD65v2")
        }
    }
}
