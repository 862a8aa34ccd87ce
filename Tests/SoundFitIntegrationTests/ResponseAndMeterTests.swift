import Foundation
import SoundFitTestSupport
import Testing

/// The chain's response curve and the live meters over OSC, against the real binary and JACK.
extension SoundFitIntegration {
    @Suite("Response and meters") struct ResponseAndMeters {
        /// `/response [,i points]` → stages, frequencies, left, right.
        struct Curve {
            var stages: [String: String]
            var sampleRate: Double
            var frequencies: [Double]
            var left: [Double]
            var right: [Double]

            /// The curve at `frequency`, linear in log frequency between the two nearest points.
            func value(_ curve: [Double], at frequency: Double) -> Double {
                let upper = frequencies.firstIndex { $0 >= frequency }!
                guard upper > 0 else { return curve[0] }
                let t = log(frequency / frequencies[upper - 1]) / log(frequencies[upper] / frequencies[upper - 1])
                return curve[upper - 1] + t * (curve[upper] - curve[upper - 1])
            }
        }

        static func askResponse(_ osc: OSCTestClient, points: Int32? = nil) throws -> Curve {
            osc.sendRaw(OSCWire.encode(OSCTestMessage("/response", points.map { [OSCValue.int($0)] } ?? [])))
            let stages = try osc.waitFor("/response/stages") { $0.address == "/response/stages" || $0.address == "/error" }.match
            #expect(stages.address == "/response/stages", "\(stages)")
            func floats(_ address: String, unit: String) throws -> [Double] {
                let message = try osc.waitFor(address) { $0.address == address }.match
                #expect(message.arguments.last == .string(unit), "\(address) does not end in its unit")
                return message.arguments.dropLast().compactMap(\.number)
            }
            let frequencies = try floats("/response/frequencies", unit: "Hz")
            let left = try floats("/response/left", unit: "dB")
            let right = try floats("/response/right", unit: "dB")
            var names: [String: String] = [:]
            var index = 1
            while index + 1 < stages.arguments.count {
                names[stages.arguments[index].stringValue ?? ""] = stages.arguments[index + 1].stringValue
                index += 2
            }
            return Curve(stages: names, sampleRate: stages.number(0) ?? 0, frequencies: frequencies, left: left, right: right)
        }

        @Test("/response: lowpass 1 kHz reads −3.0 ± 0.1 dB at 1 kHz and −24.5 ± 0.5 dB at 4 kHz; points bounded")
        func lowpassCurve() throws {
            let rig = try SoundFitRig(channels: 2)
            defer { rig.stop() }
            let osc = rig.osc
            let flat = try Self.askResponse(osc)
            #expect(flat.frequencies.count == 128 && flat.left.allSatisfy { $0 == 0 })
            #expect(flat.stages == ["personalization": "bypassed", "filter": "bypassed", "ringmod": "bypassed", "output": "bypassed"])
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            expectApplied(try osc.set("/ringmod/enabled", .int(1)), "/ringmod/enabled", .int(1))
            let curve = try Self.askResponse(osc)
            #expect(curve.sampleRate == Capture.sampleRate)
            #expect(abs(curve.frequencies[0] - 20) < 0.01 && abs(curve.frequencies[127] - 20000) < 1)
            let at1k = curve.value(curve.left, at: 1000), at4k = curve.value(curve.left, at: 4000)
            report("lowpass 1 kHz response at 1 kHz", at1k)
            report("lowpass 1 kHz response at 4 kHz", at4k)
            #expect(abs(at1k + 3.0) <= 0.1)
            #expect(abs(at4k + 24.5) <= 0.5)
            #expect(curve.left == curve.right)
            #expect(curve.stages["filter"] == "included" && curve.stages["ringmod"] == "excluded")
            #expect(try Self.askResponse(osc, points: 1024).frequencies.count == 1024)
            for bad: Int32 in [15, 1025, -1] {
                expectErrorReply(try osc.ask("/response", [.int(bad)], reply: "/response/stages"), for: "/response", hint: "16…1024")
            }
            expectErrorReply(try osc.ask("/response", [.string("x")], reply: "/response/stages"), for: "/response")
        }

        @Test("GET /response: lowpass 1 kHz reads −3.0 ± 0.1 dB at 1 kHz and −24.5 ± 0.5 dB at 4 kHz; bad points → 400 with a reason")
        func lowpassCurveOverHTTP() throws {
            let rig = try SoundFitRig(channels: 2)
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort, "no HTTP port on the ready line")
            expectApplied(try rig.osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            let (status, json) = try PlainHTTP.getJSON(port: port, "/response")
            #expect(status == 200)
            let frequencies = try #require(json["frequencies"] as? [Double])
            let left = try #require(json["left"] as? [Double]), right = try #require(json["right"] as? [Double])
            #expect(frequencies.count == 128 && left.count == 128 && right == left)
            #expect(json["sampleRate"] as? Double == Capture.sampleRate)
            #expect((json["stages"] as? [String: String])?["filter"] == "included")
            let curve = Curve(stages: [:], sampleRate: 0, frequencies: frequencies, left: left, right: right)
            let at1k = curve.value(left, at: 1000), at4k = curve.value(left, at: 4000)
            report("GET /response lowpass 1 kHz at 1 kHz", at1k)
            report("GET /response lowpass 1 kHz at 4 kHz", at4k)
            #expect(abs(at1k + 3.0) <= 0.1)
            #expect(abs(at4k + 24.5) <= 0.5)
            #expect((try PlainHTTP.getJSON(port: port, "/response?points=1024").object["frequencies"] as? [Double])?.count == 1024)
            for bad in ["points=15", "points=4097", "points=abc", "points=", "size=20"] {
                let (badStatus, error) = try PlainHTTP.getJSON(port: port, "/response?\(bad)")
                #expect(badStatus == 400, "\(bad): \(badStatus)")
                #expect((error["error"] as? String)?.isEmpty == false, "\(bad): \(error)")
            }
        }

        /// A compressing preset (N3, tech level 3) while a sine plays: the curve at the sine's
        /// frequency, taken at the levels the sine makes, agrees with the gain measured through
        /// JACK; with the output gain and the filter on top.
        @Test("/response: the personalization at the current level agrees with sines measured through JACK (±0.5 dB)")
        func personalizationCurveMatchesJack() throws {
            let directory = try UniqueName.temporaryDirectory("sf-response")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let rig = try SoundFitRig(channels: 2, extraArguments: ["--profile", profile.path, "--tech-level", "3"])
            defer { rig.stop() }
            let osc = rig.osc
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            expectApplied(try osc.set("/processing/intensity", .float(1)), "/processing/intensity", .float(1))
            expectApplied(try osc.set("/output/gain", .float(-3)), "/output/gain", .float(-3))
            expectApplied(try osc.set("/filter/type", .string("highshelf")), "/filter/type", .string("highshelf"))
            expectApplied(try osc.set("/filter/gain", .float(4)), "/filter/gain", .float(4))
            expectApplied(try osc.set("/filter/cutoff", .float(3000)), "/filter/cutoff", .float(3000))
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            let audio = try rig.audio()
            var worst = 0.0
            for frequency in [500.0, 1000, 2000, 4000] {
                let amplitude = sineAmplitude(levelDBSPL: 70)
                let tone = Capture.tone(frequency, amplitude: amplitude)
                try audio.startPlaying([tone])
                try audio.waitForAudio(seconds: 0.5)  // the detectors settle on the tone: 0.5 s of it
                let curve = try Self.askResponse(osc, points: 1024)
                try audio.stopPlaying()
                #expect(curve.stages["personalization"] == "included")
                let captured = try audio.capture([tone], frames: Capture.captureFrames)
                for (channel, ear) in [(0, curve.left), (1, curve.right)] {
                    let measured = Capture.toneLevel(captured[channel], frequency: frequency, reference: amplitude)
                    let predicted = curve.value(ear, at: frequency)
                    report("\(Int(frequency)) Hz ch\(channel + 1): curve \(String(format: "%.2f", predicted)) dB", measured)
                    worst = max(worst, abs(measured - predicted))
                    #expect(abs(measured - predicted) <= 0.5,
                            "\(frequency) Hz ch\(channel + 1): measured \(measured) dB, curve \(predicted) dB")
                }
                // The ears differ (N3 left, N2 right): a swapped mapping would not agree.
                #expect(curve.left != curve.right)
            }
            report("largest difference between curve and measured sine gain", worst)
        }

        /// Reads the next `periods` periods of the meter stream (what queued up before is
        /// dropped) and returns the last `/meters/input`, `/meters/output` and
        /// `/meters/reduction` (channel 1) seen, and the seconds from the first period's
        /// `/meters/input` to the last one's: the stream's own messages are the events.
        static func lastMeters(_ osc: OSCTestClient, periods: Int) throws
            -> (input: [Double], output: [Double], reduction: [Double], seconds: Double) {
            osc.drain()
            _ = try nextMeterPeriod(osc)
            let start = ContinuousClock.now
            var messages: [OSCTestMessage] = []
            for _ in 0..<periods { messages += try nextMeterPeriod(osc) }
            let elapsed = ContinuousClock.now - start
            let inputs = messages.filter { $0.address == "/meters/input" }
            let outputs = messages.filter { $0.address == "/meters/output" }
            let reductions = messages.filter { $0.address == "/meters/reduction" && $0.number(0) == 1 }
            return (inputs.last?.arguments.compactMap(\.number) ?? [], outputs.last?.arguments.compactMap(\.number) ?? [],
                    Array(reductions.last?.arguments.dropFirst().compactMap(\.number) ?? []),
                    Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }

        /// Reads the meter stream up to and including the next `/meters/input` (one per period)
        /// and returns what was read.
        static func nextMeterPeriod(_ osc: OSCTestClient) throws -> [OSCTestMessage] {
            let period = try osc.waitFor("a meter period") { $0.address == "/meters/input" }
            return period.before + [period.match]
        }

        /// Reads the meter stream until a `/meters/input` message satisfies `condition` (its
        /// values), or throws at `timeout`. The detectors' settling is an approach with no event
        /// of its own; the reading it leads to is the event waited on.
        static func waitForInputMeters(_ osc: OSCTestClient, timeout: Duration = .seconds(10),
                                       _ condition: ([Double]) -> Bool) throws {
            try waitForMeters(osc, "input", timeout: timeout, where: { $0.address == "/meters/input" },
                              values: { $0.arguments.compactMap(\.number) }, condition)
        }

        /// Reads the meter stream until channel 1's `/meters/reduction` satisfies `condition`
        /// (its per-band values), or throws at `timeout`.
        static func waitForReduction(_ osc: OSCTestClient, timeout: Duration = .seconds(10),
                                     _ condition: ([Double]) -> Bool) throws {
            try waitForMeters(osc, "reduction", timeout: timeout, where: { $0.address == "/meters/reduction" && $0.number(0) == 1 },
                              values: { Array($0.arguments.dropFirst().compactMap(\.number)) }, condition)
        }

        /// Reads meter messages that `matches` until the `values` of one satisfy `condition`, or
        /// throws at `timeout` naming `meters` and the last reading.
        private static func waitForMeters(_ osc: OSCTestClient, _ meters: String, timeout: Duration,
                                          where matches: (OSCTestMessage) -> Bool,
                                          values: (OSCTestMessage) -> [Double], _ condition: ([Double]) -> Bool) throws {
            let deadline = ContinuousClock.now + timeout
            var last: [Double] = []
            while ContinuousClock.now < deadline {
                let remaining = deadline - ContinuousClock.now
                guard let message = try? osc.waitFor("/meters/\(meters)", timeout: remaining, where: matches).match else { break }
                last = values(message)
                if condition(last) { return }
            }
            throw IntegrationError("the \(meters) meters did not reach the expected reading within \(timeout); last: \(last)")
        }

        @Test("Meters: a −20 dBFS tone reads −20 peak / −23 RMS at the input and −6 dB less at the output; silence reads −120")
        func metersFollowATone() throws {
            let rig = try SoundFitRig(channels: 2)
            defer { rig.stop() }
            let osc = rig.osc
            expectApplied(try osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))
            let subscribed = try osc.ask("/meters/subscribe", [.float(20)], reply: "/meters/subscribed")
            #expect(subscribed.address == "/meters/subscribed" && subscribed.number(0) == 20, "\(subscribed)")
            let audio = try rig.audio()
            try audio.startPlaying([Capture.tone(1000, amplitude: 0.1), Capture.tone(440, amplitude: 0.05)])
            // The detectors settle: the readings reach the tone's levels (what queued up before
            // is consumed on the way).
            let expectedInput = [-20.0, -23.01, -26.02, -29.03]
            try Self.waitForInputMeters(osc) { values in
                values.count == 4 && zip(values, expectedInput).allSatisfy { abs($0 - $1) <= 0.5 }
            }
            let playing = try Self.lastMeters(osc, periods: 20)
            report("meter periods per second at rate 20", 20 / playing.seconds, unit: "periods")
            // 20 periods at 10…22 a second, the bounds the stream is held to.
            #expect(playing.seconds >= 20.0 / 22 && playing.seconds <= 20.0 / 10, "20 periods in \(playing.seconds) s")
            // Channel 1: 0.1 peak (−20 dBFS), RMS −23.01; channel 2: 0.05 (−26.02), RMS −29.03.
            #expect(playing.input.count == 4 && playing.output.count == 4, "\(playing)")
            for (index, expected) in expectedInput.enumerated() where index < playing.input.count {
                report("input meter \(index)", playing.input[index], unit: "dBFS")
                report("output meter \(index)", playing.output[index], unit: "dBFS")
                #expect(abs(playing.input[index] - expected) <= 0.5, "input \(index): \(playing.input[index])")
                #expect(abs(playing.output[index] - (expected - 6)) <= 0.5, "output \(index): \(playing.output[index])")
            }
            #expect(playing.reduction.isEmpty, "no personalization, no reduction values")
            try audio.stopPlaying()
            try Self.waitForInputMeters(osc) { $0 == [-120, -120, -120, -120] }  // the detectors' release
            let silent = try Self.lastMeters(osc, periods: 10)
            #expect(silent.input == [-120, -120, -120, -120] && silent.output == [-120, -120, -120, -120], "\(silent)")

            // Bad requests are answered, and the stream ends on request.
            expectErrorReply(try osc.ask("/meters/subscribe", [.float(31)], reply: "/meters/subscribed"),
                             for: "/meters/subscribe", hint: "1…30")
            expectErrorReply(try osc.ask("/meters/subscribe", [.string("fast")], reply: "/meters/subscribed"),
                             for: "/meters/subscribe")
            // Meter messages come from the meter task, not ordered by /sync: another subscriber's
            // periods are the clock. A stopped stream shows as ten of them without a meter message.
            let witness = try OSCTestClient(port: rig.ready.oscPort)
            #expect(try witness.ask("/meters/subscribe", [.float(20)], reply: "/meters/subscribed").address == "/meters/subscribed")
            #expect(try osc.ask("/meters/unsubscribe", reply: "/meters/unsubscribed").address == "/meters/unsubscribed")
            // Two periods for one under way at the unsubscription; what it sent is dropped.
            for _ in 0..<2 { _ = try Self.nextMeterPeriod(witness) }
            osc.drain()
            for _ in 0..<10 { _ = try Self.nextMeterPeriod(witness) }
            #expect(!osc.collect(for: .zero).contains { $0.address.hasPrefix("/meters/") })
            expectErrorReply(try osc.ask("/meters/unsubscribe", reply: "/meters/unsubscribed"), for: "/meters/unsubscribe")
        }

        @Test("Meters: a loud tone in a compressing band shows gain reduction there, a quiet one at the knee none")
        func gainReductionAppears() throws {
            let directory = try UniqueName.temporaryDirectory("sf-meters")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n3, in: directory)
            let presets = try PrintedPresets.generate(profile: profile)
            let band = try #require(presets.variants["default"]?.left[2])  // 1 kHz
            let rig = try SoundFitRig(channels: 2, extraArguments: ["--profile", profile.path, "--tech-level", "3"])
            defer { rig.stop() }
            let osc = rig.osc
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try osc.ask("/meters/subscribe", [.int(25)], reply: "/meters/subscribed").address == "/meters/subscribed")
            let audio = try rig.audio()
            // At the knee the band applies the law's gain below the knee: nothing reduced.
            try audio.startPlaying([Capture.tone(1000, amplitude: sineAmplitude(levelDBSPL: band.knee))])
            // The detectors settle. At the knee the reduction reads about 0 all the way, so no
            // reading marks the end of their rise: 0.5 s of the tone, long against their time
            // constants, counted in JACK cycles.
            try audio.waitForAudio(seconds: 0.5)
            osc.drain()  // meter messages from before they settled
            let quiet = try Self.lastMeters(osc, periods: 6)
            try audio.stopPlaying()
            // 30 dB above the reference level: compression and the band limit reduce the gain.
            let loud = min(band.referenceLevel + 30, 99)
            // Expected from the printed law: gain at the knee minus the gain at `loud`, at least.
            let slope = 1 / band.ratio - 1
            let atKnee = min(band.gain + slope * (band.knee - band.referenceLevel), band.maximumGain)
            let atLoud = min(band.gain + slope * (loud - band.referenceLevel), band.maximumGain, band.outputLimit - loud)
            try audio.startPlaying([Capture.tone(1000, amplitude: sineAmplitude(levelDBSPL: loud))])
            // The detectors settle: the 1 kHz band's reduction reaches the law's (what queued up
            // before is consumed on the way).
            try Self.waitForReduction(osc) { $0.count == 8 && abs($0[2] - (atKnee - atLoud)) <= 1 }
            let compressed = try Self.lastMeters(osc, periods: 6)
            try audio.stopPlaying()
            #expect(quiet.reduction.count == 8 && compressed.reduction.count == 8, "\(quiet) \(compressed)")
            guard quiet.reduction.count == 8, compressed.reduction.count == 8 else { return }
            report("1 kHz band reduction at \(band.knee) dB SPL", quiet.reduction[2], unit: "dB")
            report("1 kHz band reduction at \(loud) dB SPL (law: \(atKnee - atLoud))", compressed.reduction[2], unit: "dB")
            #expect(quiet.reduction[2] <= 0.5)
            #expect(abs(compressed.reduction[2] - (atKnee - atLoud)) <= 1, "\(compressed.reduction)")
            #expect(compressed.reduction[2] > 3)
        }
    }
}
