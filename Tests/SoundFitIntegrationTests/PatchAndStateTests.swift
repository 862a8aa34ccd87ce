import Foundation
import Glibc
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// Patches and durable state through the real binary: `/patch/*` over OSC, user patch files,
    /// `state.json` across restarts and `kill -9`, broken files, `soundfit state export|import`.
    @Suite("Patches and state") struct PatchesAndState {
        static let factoryPatches: [(Int32, String)] = [
            (0, "Transparent"), (1, "Speech clarity"), (2, "Lowpass 1 kHz"), (3, "Ring modulator 22 Hz"), (4, "Telephone band"),
        ]

        // MARK: Helpers

        /// `/patch/list` → the `(number, name)` items, checking `/patch/end`'s count.
        private func patchList(_ osc: OSCTestClient, sourceLocation: SourceLocation = #_sourceLocation) throws -> [(Int32, String)] {
            osc.send("/patch/list")
            let end = try osc.waitFor("/patch/end") { $0.address == "/patch/end" }
            let items = end.before.filter { $0.address == "/patch/item" }.map { item -> (Int32, String) in
                guard case .int(let number)? = item.arguments.first else { return (Int32.min, "") }
                return (number, item.string(1) ?? "")
            }
            #expect(end.match.arguments == [.int(Int32(items.count)), .int(-1)], "\(end.match)", sourceLocation: sourceLocation)
            return items
        }

        /// Expects `/error address` whose message contains every hint, in reply to `address args`.
        private func expectError(_ osc: OSCTestClient, _ address: String, _ arguments: [OSCValue], reply: String,
                                 _ hints: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
            let answer = try osc.request(address, arguments, reply: reply)
            #expect(answer.address == "/error" && answer.string(0) == address, "\(address) \(arguments): \(answer)",
                    sourceLocation: sourceLocation)
            let message = answer.string(1) ?? ""
            #expect(!message.isEmpty, sourceLocation: sourceLocation)
            for hint in hints {
                #expect(message.localizedCaseInsensitiveContains(hint), "\(address) \(arguments): '\(message)' lacks '\(hint)'",
                        sourceLocation: sourceLocation)
            }
            print("note: \(address) \(arguments) → \(message)")
        }

        /// 1 kHz level through the chain (dB re input) on every channel.
        private func level1k(_ audio: TestJackClient) throws -> [Double] {
            try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames).map { Capture.toneLevel($0, frequency: 1000) }
        }

        private func lowpassDecibels(_ cutoff: Double, at frequency: Double = 1000) -> Double {
            CookbookBiquad(kind: .lpf, f0: cutoff, q: 0.7071, dbGain: 0, fs: Capture.sampleRate)
                .magnitudeDecibels(atFrequency: frequency, fs: Capture.sampleRate)
        }

        // MARK: Tests

        @Test("/patch/load \"Lowpass 1 kHz\" attenuates 4 kHz by ≥ 20 dB; /patch/current to sender and subscribers; Transparent undoes it")
        func loadLowpassPatch() throws {
            let rig = try Rig.start(.process(channels: 2))
            defer { rig.stop() }
            let subscriber = try OSCTestClient.subscribed(to: rig.ready.oscPort)
            let list = try patchList(rig.osc)
            #expect(list.map(\.0) == Self.factoryPatches.map(\.0) && list.map(\.1) == Self.factoryPatches.map(\.1), "\(list)")

            let audio = try rig.audio()
            let mix = zip(Capture.tone(250), Capture.tone(4000)).map { $0 + $1 }
            for samples in try audio.capture([mix], frames: Capture.captureFrames) {
                #expect(abs(Capture.toneLevel(samples, frequency: 4000)) <= 0.05)
            }

            let current = try rig.osc.request("/patch/load", [.string("Lowpass 1 kHz")], reply: "/patch/current")
            #expect(current.address == "/patch/current" && current.arguments.prefix(2) == [.int(2), .string("Lowpass 1 kHz")], "\(current)")
            // Subscribers: the new current patch and feedback for what changed (only the filter switch).
            let notified = try subscriber.waitFor("/patch/current for subscribers") { $0.address == "/patch/current" }
            #expect(notified.match.arguments.prefix(2) == [.int(2), .string("Lowpass 1 kHz")], "\(notified.match)")
            // /synced follows the value feedback the load caused, to every subscriber: unchanged
            // values must not be in it.
            try rig.osc.sync()
            var feedback = notified.before + subscriber.collect(for: .zero)
            feedback = feedback.filter { $0.address != "/state" && $0.address != "/patch/current" }
            #expect(feedback.contains(OSCTestMessage("/filter/enabled", [.int(1)])), "subscriber feedback: \(feedback)")
            #expect(!feedback.contains { $0.address == "/filter/cutoff" }, "unchanged values reported: \(feedback)")
            #expect(try rig.osc.query("/filter/enabled") == .int(1))

            let filtered = try audio.capture([mix], frames: Capture.captureFrames)
            Capture.expectLowpass1kHz(filtered, report: "patch Lowpass 1 kHz")

            // A change after loading marks the patch modified; back again, unmodified.
            expectApplied(try rig.osc.set("/filter/cutoff", .float(1500)), "/filter/cutoff", .float(1500))
            let modified = try rig.osc.request("/patch/current", [], reply: "/patch/current")
            #expect(modified.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(1), .int(0)], "\(modified)")
            let modifiedNotice = try subscriber.waitFor("/patch/current (modified) for subscribers") { $0.address == "/patch/current" }
            #expect(modifiedNotice.match.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(1), .int(0)], "\(modifiedNotice.match)")
            expectApplied(try rig.osc.set("/filter/cutoff", .float(1000)), "/filter/cutoff", .float(1000))
            let unmodified = try rig.osc.request("/patch/current", [], reply: "/patch/current")
            #expect(unmodified.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(0), .int(0)], "\(unmodified)")

            // Loading by number: Transparent restores the unity path.
            let transparent = try rig.osc.request("/patch/load", [.int(0)], reply: "/patch/current")
            #expect(transparent.arguments.prefix(2) == [.int(0), .string("Transparent")], "\(transparent)")
            for samples in try audio.capture([mix], frames: Capture.captureFrames) {
                #expect(abs(Capture.toneLevel(samples, frequency: 4000)) <= 0.05)
                #expect(abs(Capture.toneLevel(samples, frequency: 250)) <= 0.05)
            }
        }

        @Test("A user patch saved over OSC is a file; after a restart it is listed and loads, and the last values are back")
        func saveAndRestart() throws {
            let rig = try Rig.start(.stateful(channels: 2))
            defer { rig.stop() }
            var osc = try rig.osc
            expectApplied(try osc.set("/filter/cutoff", .float(2000)), "/filter/cutoff", .float(2000))
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            expectApplied(try osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))

            let saved = try osc.request("/patch/save", [.string("Evening test")], reply: "/patch/saved")
            #expect(saved.address == "/patch/saved", "\(saved)")
            guard case .int(let number)? = saved.arguments.first else {
                Issue.record("no patch number in \(saved)")
                return
            }
            #expect(number < 0 && saved.string(1) == "Evening test", "\(saved)")
            let file = rig.stateDirectory.appendingPathComponent("patches/user-\(-Int(number)).json")
            let patch = try JSONFile.object(at: file)
            #expect(patch["name"] as? String == "Evening test")
            #expect((patch["number"] as? NSNumber)?.intValue == Int(number))
            let patchParameters = patch["parameters"] as? [String: Any] ?? [:]
            #expect((patchParameters["/output/gain"] as? NSNumber)?.doubleValue == -6, "\(patchParameters)")
            #expect((patchParameters["/filter/cutoff"] as? NSNumber)?.doubleValue == 2000, "\(patchParameters)")
            #expect(try osc.request("/patch/current", [], reply: "/patch/current").arguments.prefix(2)
                    == [.int(number), .string("Evening test")])

            // Later changes are the last applied state; they reach state.json (debounced).
            expectApplied(try osc.set("/output/gain", .float(-3)), "/output/gain", .float(-3))
            expectApplied(try osc.set("/filter/cutoff", .float(4000)), "/filter/cutoff", .float(4000))
            if let took = waitUntilSaved(rig.stateDirectory, "/filter/cutoff", 4000) {
                report("applied change → state.json", Double(took.components.attoseconds) / 1e15 + Double(took.components.seconds) * 1000, unit: "ms")
            }
            let stateAttributes = try FileManager.default.attributesOfItem(atPath: rig.stateDirectory.appendingPathComponent("state.json").path)
            #expect((stateAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "state.json holds a hearing profile: mode 0600")
            // The delivery timeout is part of the state.
            #expect(try osc.request("/config/timeout", [.float(7)], reply: "/config/timeout").arguments == [.float(7), .string("seconds")])
            // Applied right before a clean shutdown (inside the debounce): flushed on exit.
            expectApplied(try osc.set("/output/gain", .float(-3.5)), "/output/gain", .float(-3.5))

            try rig.restart()
            osc = try rig.osc
            let list = try patchList(osc)
            #expect(list.contains { $0 == (number, "Evening test") }, "\(list)")
            #expect(try osc.query("/output/gain") == .float(-3.5), "the change made just before SIGTERM was not kept")
            #expect(try osc.request("/config/timeout", [], reply: "/config/timeout").arguments == [.float(7), .string("seconds")])
            expectApplied(try osc.set("/output/gain", .float(-3)), "/output/gain", .float(-3))
            #expect(try osc.query("/filter/cutoff") == .float(4000))
            #expect(try osc.query("/filter/enabled") == .int(1))
            let restoredCurrent = try osc.request("/patch/current", [], reply: "/patch/current")
            #expect(restoredCurrent.arguments == [.int(number), .string("Evening test"), .int(1), .int(0)],
                    "current patch after restart (modified since saved): \(restoredCurrent)")
            let audio = try rig.audio()
            let expectedRestored = -3 + lowpassDecibels(4000)
            for (channel, level) in try level1k(audio).enumerated() {
                report("restored state: 1 kHz ch\(channel + 1) (expected \(String(format: "%.3f", expectedRestored)))", level)
                #expect(abs(level - expectedRestored) <= 0.1, "ch\(channel + 1): \(level) dB")
            }

            // The saved patch loads (by number, and by name in another case).
            let loaded = try osc.request("/patch/load", [.int(number)], reply: "/patch/current")
            #expect(loaded.arguments.prefix(2) == [.int(number), .string("Evening test")], "\(loaded)")
            #expect(try osc.query("/output/gain") == .float(-6))
            #expect(try osc.query("/filter/cutoff") == .float(2000))
            let expectedPatch = -6 + lowpassDecibels(2000)
            for (channel, level) in try level1k(audio).enumerated() {
                report("user patch after restart: 1 kHz ch\(channel + 1) (expected \(String(format: "%.3f", expectedPatch)))", level)
                #expect(abs(level - expectedPatch) <= 0.1, "ch\(channel + 1): \(level) dB")
            }
            expectApplied(try osc.set("/output/gain", .float(0)), "/output/gain", .float(0))
            let byName = try osc.request("/patch/load", [.string("EVENING test")], reply: "/patch/current")
            #expect(byName.arguments.prefix(2) == [.int(number), .string("Evening test")], "\(byName)")
            #expect(try osc.query("/output/gain") == .float(-6))
        }

        @Test("kill -9 during a burst of changes: state.json parses and the restart loses no value reported applied", arguments: [0.45, 1.5])
        func killDuringBurst(killAfterSeconds: Double) throws {
            let rig = try Rig.start(.stateful(channels: 2))
            defer { rig.stop() }
            let osc = try rig.osc
            expectApplied(try osc.set("/output/gain", .float(-10)), "/output/gain", .float(-10))
            waitUntilSaved(rig.stateDirectory, "/output/gain", -10)

            // A burst of distinct gains (−60 dB up in steps of 0.002 dB, none repeated), each sent
            // once the previous one's first report came (as fast as SoundFit answers); kill -9 in
            // the middle of it.
            var sent: [Float] = [-10]
            let start = ContinuousClock.now
            var index = 0
            while ContinuousClock.now - start < .seconds(killAfterSeconds) {
                let value = Float(-60 + 0.002 * Double(index))
                osc.send("/output/gain", .float(value))
                sent.append(value)
                index += 1
                _ = try osc.waitFor("a report of /output/gain \(value)") {
                    $0.address == "/state" && $0.string(0) == "/output/gain" && abs(($0.number(2) ?? .nan) - Double(value)) < 1e-4
                }
            }
            rig.killSoundFit()
            // Every report soundfit sent before it died: killSoundFit waits for its exit, and a
            // loopback datagram is in this client's socket once its send returned.
            _ = osc.collect(for: .zero)
            let applied = osc.log.filter { $0.address == "/state" && $0.string(1) == "applied" }.compactMap { $0.number(2) }
            let termination = try rig.soundfit.process.termination
            #expect(termination?.bySignal == true && termination?.status == SIGKILL, "\(String(describing: termination))")
            report("burst: changes sent before kill -9 (\(killAfterSeconds) s)", Double(sent.count - 1), unit: "changes")

            // On disk: a complete, parseable document holding one of the values sent.
            let state = try JSONFile.object(at: rig.stateDirectory.appendingPathComponent("state.json"))
            #expect(state["format"] as? String == "soundfit.state")
            let onDisk = try #require((state["parameters"] as? [String: Any])?["/output/gain"] as? NSNumber).doubleValue
            #expect(sent.contains { abs(Double($0) - onDisk) < 1e-4 }, "state.json holds \(onDisk), never sent")
            report("gain in state.json after kill -9", onDisk)
            if let previous = try? JSONFile.object(at: rig.stateDirectory.appendingPathComponent("state.previous.json")) {
                #expect(previous["format"] as? String == "soundfit.state")
            }
            let leftovers = (try FileManager.default.contentsOfDirectory(atPath: rig.stateDirectory.path))
            print("note: state directory after kill -9: \(leftovers.sorted())")

            // Restart: that value is back, and it is what the audio gets.
            try rig.start()
            let restartedOSC = try rig.osc
            let restored = try #require(try restartedOSC.query("/output/gain").number)
            // The journal may hold changes newer than state.json: the restored value is state.json's
            // or one sent after it (the values of this burst do not repeat).
            let savedIndex = sent.lastIndex { abs(Double($0) - onDisk) < 1e-4 } ?? 0
            let restoredIndex = sent.lastIndex { abs(Double($0) - restored) < 1e-4 }
            #expect(restoredIndex.map { $0 >= savedIndex } ?? false, "restored \(restored), older than state.json's \(onDisk)")
            // Nothing reported applied is lost: the restored value is the newest one reported
            // applied, or one sent after it. (A request is reported applied once the journal holds
            // what the parameter holds then, which may already be a newer value: one persisted
            // in the moment before the kill may not have been reported yet.)
            let newestApplied = applied.compactMap { value in sent.lastIndex { abs(Double($0) - value) < 1e-4 } }.max() ?? 0
            let keepsEveryApplied = restoredIndex.map { $0 >= newestApplied } ?? false
            #expect(keepsEveryApplied, "restored \(restored), older than \(sent[newestApplied]), reported applied")
            #expect(!FileManager.default.fileExists(atPath: rig.stateDirectory.appendingPathComponent("state.corrupt.json").path))
            let restartLog = try rig.soundfit.log
            #expect(!restartLog.contains("cannot be used"), "a warning about the state: \(restartLog)")
            let audio = try rig.audio()
            for (channel, level) in try level1k(audio).enumerated() {
                report("after kill -9 and restart: 1 kHz ch\(channel + 1) (restored gain \(restored))", level)
                #expect(abs(level - restored) <= 0.1, "ch\(channel + 1): \(level) dB, restored gain \(restored) dB")
            }
        }

        @Test("A state write that failed (the disk refused it) is written once the disk works again, without another change")
        func failedWriteIsRetried() throws {
            try Rig.run(.stateful(channels: 2)) { rig in
                let osc = try rig.osc
                let stateURL = rig.stateDirectory.appendingPathComponent("state.json")
                expectApplied(try osc.set("/output/gain", .float(-5)), "/output/gain", .float(-5))
                waitUntilSaved(rig.stateDirectory, "/output/gain", -5)

                // A directory in place of state.json makes the next write fail (the rename over it
                // fails; running as root, permissions would not). The good file is put back after.
                let aside = rig.stateDirectory.appendingPathComponent("aside.json")
                try FileManager.default.moveItem(at: stateURL, to: aside)
                try FileManager.default.createDirectory(at: stateURL, withIntermediateDirectories: false)
                expectApplied(try osc.set("/output/gain", .float(-7)), "/output/gain", .float(-7))
                let failedAfter = waitForCondition(timeout: .seconds(5)) { (try? rig.soundfit.log.contains("not saved")) ?? false }
                let failureLog = try rig.soundfit.log
                #expect(failedAfter != nil, "no log line about the failed write: \(failureLog)")
                print("note: \(failureLog.split(separator: "\n").filter { $0.contains("not saved") })")

                // The disk works again (state.json is the −5 dB file again). Nothing else changes:
                // the applied −7 dB must still reach disk.
                try FileManager.default.removeItem(at: stateURL)
                try FileManager.default.moveItem(at: aside, to: stateURL)
                let savedAfter = waitForCondition(timeout: .seconds(4)) { savedNumber(rig.stateDirectory, "/output/gain") == -7 }
                #expect(savedAfter != nil, "the applied change never reached state.json after the failed write (state.json: \(String(describing: savedNumber(rig.stateDirectory, "/output/gain"))))")

                // What a crash now costs: kill -9 and restart.
                rig.killSoundFit()
                try rig.start()
                let restored = try rig.osc.query("/output/gain")
                report("gain after a failed write, recovery and kill -9 (applied -7)", restored.number ?? .nan)
                #expect(restored == .float(-7), "the last applied state was lost: restored \(restored)")
            }
        }

        @Test("Broken patch files and a corrupt state.json: errors naming file and field, the previous state, everything else works")
        func corruptFiles() throws {
            // A copy of the factory patches with two broken files added.
            let patches = try UniqueName.temporaryDirectory("sf-patches")
            defer { try? FileManager.default.removeItem(at: patches) }
            let repositoryPatches = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("patches")
            for name in try FileManager.default.contentsOfDirectory(atPath: repositoryPatches.path) where name.hasSuffix(".json") {
                try FileManager.default.copyItem(at: repositoryPatches.appendingPathComponent(name),
                                                 to: patches.appendingPathComponent(name))
            }
            var outOfRange = try JSONFile.object(at: patches.appendingPathComponent("02-lowpass-1k.json"))
            outOfRange["number"] = 7
            outOfRange["name"] = "Too low"
            var parameters = outOfRange["parameters"] as! [String: Any]
            parameters["/filter/cutoff"] = 5
            outOfRange["parameters"] = parameters
            try JSONFile.write(outOfRange, to: patches.appendingPathComponent("07-too-low.json"))
            try Data(#"{"format": "soundfit.patch", "version": 1, "number": 8, "na"#.utf8)
                .write(to: patches.appendingPathComponent("08-truncated.json"))

            let rig = try Rig.start(.stateful(channels: 2, arguments: ["--patches-dir", patches.path]))
            defer { rig.stop() }
            var osc = try rig.osc
            var log = try rig.soundfit.log
            for (file, field) in [("07-too-low.json", "/filter/cutoff"), ("08-truncated.json", "")] {
                let lines = log.split(separator: "\n").filter { $0.contains(file) }
                #expect(!lines.isEmpty, "the log does not name \(file): \(log)")
                if !field.isEmpty { #expect(lines.contains { $0.contains(field) }, "\(file): \(lines)") }
                print("note: log for \(file): \(lines)")
            }
            #expect(try patchList(osc).map(\.0) == [0, 1, 2, 3, 4])

            // Two saved states: -4 dB, then -8 dB (state.previous.json keeps the -4 dB one).
            expectApplied(try osc.set("/output/gain", .float(-4)), "/output/gain", .float(-4))
            let good = try osc.request("/patch/save", [.string("Good one")], reply: "/patch/saved")
            #expect(good.arguments == [.int(-1), .string("Good one")], "\(good)")
            waitUntilSaved(rig.stateDirectory, "/output/gain", -4)
            expectApplied(try osc.set("/output/gain", .float(-8)), "/output/gain", .float(-8))
            waitUntilSaved(rig.stateDirectory, "/output/gain", -8)
            rig.stopSoundFit()
            let previous = try JSONFile.object(at: rig.stateDirectory.appendingPathComponent("state.previous.json"))
            let previousGain = ((previous["parameters"] as? [String: Any])?["/output/gain"] as? NSNumber)?.doubleValue
            #expect(previousGain == -4, "state.previous.json holds \(String(describing: previousGain))")

            // Corrupt state.json (cut in half) and two broken user patches.
            let stateURL = rig.stateDirectory.appendingPathComponent("state.json")
            let whole = try Data(contentsOf: stateURL)
            try whole.prefix(whole.count / 2).write(to: stateURL)
            let userDirectory = rig.stateDirectory.appendingPathComponent("patches")
            try Data("not json at all".utf8).write(to: userDirectory.appendingPathComponent("user-3.json"))
            var badName = try JSONFile.object(at: userDirectory.appendingPathComponent("user-1.json"))
            badName["number"] = -4
            badName["name"] = "../escape"
            try JSONFile.write(badName, to: userDirectory.appendingPathComponent("user-4.json"))

            try rig.start()
            osc = try rig.osc
            log = try rig.soundfit.log
            let stateLines = log.split(separator: "\n").filter { $0.contains("state") && $0.contains("warning") }
            print("note: state warnings: \(stateLines)")
            #expect(stateLines.contains { $0.contains("state.json") }, "no warning names state.json: \(log)")
            #expect(stateLines.contains { $0.contains("state.previous.json") }, "no warning names the previous copy: \(log)")
            for (file, field) in [("user-3.json", ""), ("user-4.json", "name")] {
                let lines = log.split(separator: "\n").filter { $0.contains(file) }
                #expect(!lines.isEmpty, "the log does not name \(file): \(log)")
                if !field.isEmpty { #expect(lines.contains { $0.contains(field) }, "\(file): \(lines)") }
                print("note: log for \(file): \(lines)")
            }
            #expect(FileManager.default.fileExists(atPath: rig.stateDirectory.appendingPathComponent("state.corrupt.json").path))

            // The previous state is back and everything else works.
            #expect(try osc.query("/output/gain") == .float(-4))
            let list = try patchList(osc)
            #expect(list.map(\.0) == [0, 1, 2, 3, 4, -1], "\(list)")
            let audio = try rig.audio()
            for (channel, level) in try level1k(audio).enumerated() {
                report("fallback to state.previous.json: 1 kHz ch\(channel + 1) (expected -4)", level)
                #expect(abs(level + 4) <= 0.1)
            }
            let lowpass = try osc.request("/patch/load", [.string("Lowpass 1 kHz")], reply: "/patch/current")
            #expect(lowpass.arguments.prefix(2) == [.int(2), .string("Lowpass 1 kHz")], "\(lowpass)")
            let high = try audio.capture([Capture.tone(4000)], frames: Capture.captureFrames).map {
                Capture.toneLevel($0, frequency: 4000)
            }
            #expect(high.allSatisfy { $0 <= -20 }, "\(high)")
            // A new user patch does not take a broken file's number.
            let another = try osc.request("/patch/save", [.string("Another")], reply: "/patch/saved")
            #expect(another.address == "/patch/saved", "\(another)")
            if case .int(let number)? = another.arguments.first { #expect(number < -4, "\(another)") }
            expectApplied(try osc.set("/output/gain", .float(-2)), "/output/gain", .float(-2))
            waitUntilSaved(rig.stateDirectory, "/output/gain", -2)
            #expect((try? JSONFile.object(at: stateURL))?["format"] as? String == "soundfit.state")
            // The broken user files are still there, untouched.
            #expect(try Data(contentsOf: userDirectory.appendingPathComponent("user-3.json")) == Data("not json at all".utf8))
        }

        @Test("Deleting a factory patch, bad names and unknown numbers → /error; a user patch can be deleted")
        func patchErrors() throws {
            let rig = try Rig.start(.stateful(channels: 1))
            defer { rig.stop() }
            let osc = try rig.osc
            try expectError(osc, "/patch/delete", [.int(2)], reply: "/patch/deleted", ["factory"])
            try expectError(osc, "/patch/delete", [.string("Transparent")], reply: "/patch/deleted", ["factory"])
            try expectError(osc, "/patch/delete", [.int(-99)], reply: "/patch/deleted", ["-99"])
            try expectError(osc, "/patch/delete", [], reply: "/patch/deleted")
            try expectError(osc, "/patch/load", [.int(99)], reply: "/patch/current", ["99"])
            try expectError(osc, "/patch/load", [.int(-7)], reply: "/patch/current", ["-7"])
            try expectError(osc, "/patch/load", [.string("No such patch")], reply: "/patch/current", ["No such patch"])
            try expectError(osc, "/patch/load", [], reply: "/patch/current")
            try expectError(osc, "/patch/load", [.float(1.5)], reply: "/patch/current")
            let longName = String(repeating: "x", count: 65)
            for (name, hint) in [("../escape", "path"), ("a/b", "path"), ("", "empty"), (longName, "long"), ("123", "number"),
                                 ("Transparent", "factory"), ("lowpass 1 KHZ", "factory"), (" padded", "space"),
                                 ("bell\u{7}", "control"), ("semi;colon", "allowed")] {
                try expectError(osc, "/patch/save", [.string(name)], reply: "/patch/saved", [hint])
            }
            try expectError(osc, "/patch/save", [.int(5)], reply: "/patch/saved")
            try expectError(osc, "/patch/save", [], reply: "/patch/saved")
            // Speech clarity needs a hearing profile: refused, nothing changes.
            try expectError(osc, "/patch/load", [.string("Speech clarity")], reply: "/patch/current", ["profile"])
            #expect(try osc.query("/processing/enabled") == .int(0))
            #expect(try osc.query("/processing/preset") == .string("none"))
            // Nothing was written for any of it, the factory patches are all there.
            let userDirectory = rig.stateDirectory.appendingPathComponent("patches")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: userDirectory.path)) ?? []
            #expect(files.isEmpty, "files written for refused requests: \(files)")
            #expect(try patchList(osc).map(\.0) == [0, 1, 2, 3, 4])

            // A user patch: save, delete, gone (file too); deleting or loading it again is an error.
            let saved = try osc.request("/patch/save", [.string("Temp (1)")], reply: "/patch/saved")
            guard case .int(let number)? = saved.arguments.first, saved.address == "/patch/saved" else {
                Issue.record("save failed: \(saved)")
                return
            }
            let file = userDirectory.appendingPathComponent("user-\(-Int(number)).json")
            #expect(FileManager.default.fileExists(atPath: file.path))
            // Saving under the same name (any case) overwrites it and keeps the number.
            expectApplied(try osc.set("/output/gain", .float(-1)), "/output/gain", .float(-1))
            let again = try osc.request("/patch/save", [.string("temp (1)")], reply: "/patch/saved")
            #expect(again.arguments.first == .int(number), "\(again)")
            #expect(try patchList(osc).filter { $0.0 < 0 }.count == 1)
            #expect(((try JSONFile.object(at: file))["parameters"] as? [String: Any])?["/output/gain"] as? NSNumber == -1)
            let deleted = try osc.request("/patch/delete", [.int(number)], reply: "/patch/deleted")
            #expect(deleted == OSCTestMessage("/patch/deleted", [.int(number)]), "\(deleted)")
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try patchList(osc).map(\.0) == [0, 1, 2, 3, 4])
            try expectError(osc, "/patch/delete", [.int(number)], reply: "/patch/deleted")
            try expectError(osc, "/patch/load", [.int(number)], reply: "/patch/current")
            try expectError(osc, "/patch/current", [], reply: "/patch/current", ["no patch"])

            // With a hearing profile, Speech clarity loads: personalization on at 0.75. A 1 kHz
            // sine at its band's reference level gets the band gain interpolated at 0.75:
            // 20·log10(1 + 0.75·(10^(19.65/20) − 1)) = 17.45 dB for N3.
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            expectApplied(try osc.set("/processing/enabled", .int(0)), "/processing/enabled", .int(0))
            expectApplied(try osc.set("/processing/intensity", .float(0.2)), "/processing/intensity", .float(0.2))
            expectApplied(try osc.set("/output/gain", .float(0)), "/output/gain", .float(0))
            let clarity = try osc.request("/patch/load", [.string("Speech clarity")], reply: "/patch/current")
            #expect(clarity.arguments.prefix(2) == [.int(1), .string("Speech clarity")], "\(clarity)")
            #expect(try osc.query("/processing/enabled") == .int(1))
            #expect(try osc.query("/processing/intensity") == .float(0.75))
            #expect(try osc.query("/processing/preset") == .string("default"))
            let amplitude = sineAmplitude(levelDBSPL: 52.99)
            let captured = try rig.audio().capture([Capture.tone(1000, amplitude: amplitude)], frames: Capture.captureFrames)
            let expected = Meter.decibels(1 + 0.75 * (pow(10, 19.65 / 20) - 1))
            let gain = Capture.toneLevel(captured[0], frequency: 1000, reference: amplitude)
            report("Speech clarity (N3, intensity 0.75): 1 kHz gain (expected \(String(format: "%.2f", expected)))", gain)
            #expect(abs(gain - expected) <= 1, "\(gain) dB")
        }

        @Test("A patch whose preset variant the current hearing profile does not offer is refused as a whole, nothing changed")
        func patchWithUnavailableVariant() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            // A user patch with the N3 profile's "up" preset and −12 dB output gain.
            let n3 = try rig.osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(n3.address == "/profile/presets", "\(n3)")
            #expect(try rig.osc.pollQuery("/processing/preset") { $0 == .string("default") } == .string("default"))
            expectEndsApplied(try rig.osc.set("/processing/preset", .string("up")), "/processing/preset")
            expectApplied(try rig.osc.set("/output/gain", .float(-12)), "/output/gain", .float(-12))
            let saved = try rig.osc.request("/patch/save", [.string("Rich")], reply: "/patch/saved")
            #expect(saved.address == "/patch/saved", "\(saved)")

            // Normal hearing now: only "default" exists, so the patch cannot be applied.
            let normal = try rig.osc.request("/profile/audiogram", TestAudiogram.normal.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(normal.arguments == [.string("default")], "\(normal)")
            #expect(try rig.osc.pollQuery("/processing/preset") { $0 == .string("default") } == .string("default"))
            expectApplied(try rig.osc.set("/output/gain", .float(-3)), "/output/gain", .float(-3))
            try expectError(rig.osc, "/patch/load", [.string("Rich")], reply: "/patch/current", ["up"])
            try rig.osc.sync()  // the load has ended (its answer and any change it made come first)
            // Refused as a whole (StateKeeper.loadPatch's contract): nothing changed.
            #expect(try rig.osc.query("/output/gain") == .float(-3), "a refused patch load changed /output/gain")
            #expect(try rig.osc.query("/processing/preset") == .string("default"))
        }

        @Test("Speech clarity after Transparent: no /error, every value of the patch, personalization heard")
        func speechClarityAfterTransparent() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let presets = try rig.osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
            #expect(try rig.osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            let transparent = try rig.osc.request("/patch/load", [.int(0)], reply: "/patch/current")
            #expect(transparent.arguments == [.int(0), .string("Transparent"), .int(0), .int(0)], "\(transparent)")
            #expect(try rig.osc.query("/processing/preset") == .string("none"))
            #expect(try rig.osc.query("/processing/can_enable") == .int(0))

            // The patch's own preset is applied before its enable is checked: the load succeeds.
            let clarity = try rig.osc.request("/patch/load", [.int(1)], reply: "/patch/current")
            #expect(clarity.arguments == [.int(1), .string("Speech clarity"), .int(0), .int(0)], "\(clarity)")
            let expected: [(String, OSCValue)] = [
                ("/processing/enabled", .int(1)), ("/processing/intensity", .float(0.75)), ("/processing/preset", .string("default")),
                ("/filter/enabled", .int(0)), ("/filter/type", .string("lowpass")), ("/filter/cutoff", .float(1000)),
                ("/filter/q", .float(0.7071)), ("/filter/gain", .float(0)), ("/ringmod/enabled", .int(0)),
                ("/ringmod/frequency", .float(22)), ("/ringmod/mix", .float(1)), ("/output/enabled", .int(1)), ("/output/gain", .float(0)),
            ]
            for (address, value) in expected {
                #expect(try rig.osc.query(address) == value, "\(address)")
            }
            // Heard: a 1 kHz sine at its band's reference level gets N3's band gain at intensity
            // 0.75, 20·log10(1 + 0.75·(10^(19.65/20) − 1)) = 17.45 dB (0 dB with personalization off).
            let amplitude = sineAmplitude(levelDBSPL: 52.99)
            let captured = try rig.audio().capture([Capture.tone(1000, amplitude: amplitude)], frames: Capture.captureFrames)
            let gain = Capture.toneLevel(captured[0], frequency: 1000, reference: amplitude)
            let expectedGain = Meter.decibels(1 + 0.75 * (pow(10, 19.65 / 20) - 1))
            report("Speech clarity after Transparent: 1 kHz gain (expected \(String(format: "%.2f", expectedGain)))", gain)
            #expect(abs(gain - expectedGain) <= 1, "\(gain) dB")
        }

        @Test("state export, then import into a fresh state directory, reproduces the same captured output")
        func exportImport() throws {
            let rig = try Rig.start(.stateful(channels: 2))
            defer { rig.stop() }
            let osc = try rig.osc
            // A state that shapes the sound: personalization (N3, full intensity), a peak filter, gain.
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            expectApplied(try osc.set("/processing/intensity", .float(1)), "/processing/intensity", .float(1))
            expectEndsApplied(try osc.set("/processing/preset", .string("up")), "/processing/preset")
            for (address, value) in [("/filter/type", OSCValue.string("peak")), ("/filter/cutoff", .float(2500)),
                                      ("/filter/q", .float(1.5)), ("/filter/gain", .float(-9)), ("/filter/enabled", .int(1)),
                                      ("/output/gain", .float(-3))] {
                expectApplied(try osc.set(address, value), address, value)
            }
            waitUntilSaved(rig.stateDirectory, "/output/gain", -3)

            let frequencies: [Double] = [250, 500, 1000, 2000, 2500, 4000, 6000]
            let signal = SignalGenerator.multiTone(frequencies: frequencies, amplitude: 0.01, sampleRate: Capture.sampleRate,
                                                   count: Capture.loopFrames, seed: 5)
            func levels(_ audio: TestJackClient) throws -> [[Double]] {
                try audio.capture([signal], frames: Capture.captureFrames).map { samples in
                    frequencies.map { Capture.toneLevel(samples, frequency: $0, reference: 0.01) }
                }
            }
            let original = try levels(try rig.audio())
            rig.stopSoundFit()

            let work = try UniqueName.temporaryDirectory("sf-export")
            defer { try? FileManager.default.removeItem(at: work) }
            let exported = work.appendingPathComponent("exported.json")
            let export = try SoundFitCommandLine.run(["state", "export", "--state-dir", rig.stateDirectory.path, "--output", exported.path])
            #expect(export.succeeded, "export: \(export.standardError)")
            let document = try JSONFile.object(at: exported)
            #expect(document["format"] as? String == "soundfit.state")
            #expect(document["hearing_profile"] is [String: Any], "no hearing profile in the export")
            #expect(((document["parameters"] as? [String: Any])?["/processing/preset"] as? String) == "up")

            let fresh = work.appendingPathComponent("fresh-state")
            let imported = try SoundFitCommandLine.run(["state", "import", exported.path, "--state-dir", fresh.path])
            #expect(imported.succeeded, "import: \(imported.standardError)")
            #expect(FileManager.default.fileExists(atPath: fresh.appendingPathComponent("state.json").path))

            // A broken document is refused with a message naming it; the state stays as it was.
            let broken = work.appendingPathComponent("broken.json")
            let exportedData = try Data(contentsOf: exported)
            try exportedData.prefix(exportedData.count / 3).write(to: broken)
            let stateBefore = try Data(contentsOf: fresh.appendingPathComponent("state.json"))
            let refused = try SoundFitCommandLine.run(["state", "import", broken.path, "--state-dir", fresh.path])
            #expect(!refused.succeeded && refused.standardError.contains("broken.json"), "import of a broken file: \(refused)")
            print("note: import of a truncated document → \(refused.standardError.trimmingCharacters(in: .whitespacesAndNewlines))")
            #expect(try Data(contentsOf: fresh.appendingPathComponent("state.json")) == stateBefore)

            let second = try SoundFitInstance(server: rig.server, stateDirectory: fresh, channels: 2)
            defer { second.stop() }
            #expect(try second.osc.pollQuery("/processing/preset") { $0 == .string("up") } == .string("up"))
            #expect(try second.osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try second.osc.query("/processing/intensity") == .float(1))
            let client = try TestJackClient(server: rig.server.name, name: "sftest-import", channels: 2)
            defer { client.close() }
            try client.connect(toClient: second.ready.client)
            let reproduced = try levels(client)
            var largest = 0.0, shaped = 0.0
            for channel in 0..<2 {
                for (index, frequency) in frequencies.enumerated() {
                    let difference = reproduced[channel][index] - original[channel][index]
                    largest = max(largest, abs(difference))
                    shaped = max(shaped, abs(original[channel][index]))
                    report("export/import ch\(channel + 1) \(Int(frequency)) Hz: original \(String(format: "%.3f", original[channel][index])), imported", reproduced[channel][index])
                    #expect(abs(difference) <= 0.05, "ch\(channel + 1) \(frequency) Hz: \(original[channel][index]) → \(reproduced[channel][index])")
                }
            }
            report("export/import largest level difference", largest)
            // Control: the state matters (an import that lost it would show here).
            #expect(shaped >= 6, "the exported state hardly changes the sound (\(shaped) dB)")
        }
    }
}
