import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// A bundle with a future timetag takes effect in the
    /// audio cycle that contains its moment; "immediately" and past timetags apply at once; a
    /// timetag beyond the horizon, or a timed bundle with something that cannot be scheduled,
    /// is refused whole.
    @Suite("Bundle timetags") struct Timetags {
        /// `/state` reports for `requestID`, in arrival order, up to its terminal one.
        private func states(_ osc: OSCTestClient, requestID: Int32, timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
            let result = try osc.waitFor("terminal /state for request \(requestID)", timeout: timeout) {
                $0.isTerminalState && $0.requestID == requestID
            }
            return result.before.filter { $0.address == "/state" && $0.requestID == requestID } + [result.match]
        }

        /// Method: as in "Applied means audible", a player feeds DC 0.5 through soundfit into a
        /// recorder that notes the JACK frame time of every cycle. The test reads the wall clock
        /// and JACK's clock (`jack_get_time`) together, timetags a bundle 300 ms ahead on the wall
        /// clock, and converts the same moment on JACK's clock to a frame with
        /// `jack_time_to_frames`. At 0 dB the gain stage is exact unity, so the first recorded
        /// sample that differs is where the change took effect.
        @Test("A bundle 300 ms ahead changes the recorded audio within one period of its time")
        func futureBundleLandsInItsCycle() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let clients = try TimedAudioClients(server: rig.server.name, channels: 2)
                defer { clients.close() }
                try clients.connect(through: rig.ready.client)
                try clients.play([Float](repeating: 0.5, count: 4800))
                try clients.waitForAudio(seconds: 0.1)  // lead-in of DC through the graph
                let period = clients.period

                var distances: [Int] = []
                var requestID: Int32 = 40
                var current: Float = 0
                for target: Float in [-12, 0, -3] {
                    guard let (recording, targetFrame) = try clients.glitchFreeRecording(restoringGain: current, through: rig.osc, { _ in
                        requestID += 1
                        try clients.startRecording(frames: 36000)
                        try clients.waitForAudio(seconds: 0.1)  // lead-in: the recording holds time before the change
                        let (wall, jack) = (OSCWire.wallClockNow, clients.jackTime)
                        let targetFrame = clients.frameTime(atJackTime: jack + 300_000)
                        rig.osc.sendBundle([OSCTestMessage("/output/gain", [.float(target), .int(requestID)])],
                                       timetag: OSCWire.timetag(unixSeconds: wall + 0.3))
                        let applying = try rig.osc.waitFor("first /state for request \(requestID)") {
                            $0.address == "/state" && $0.requestID == requestID
                        }.match
                        let applyingAhead = wall + 0.3 - OSCWire.wallClockNow
                        let reports = applying.isTerminalState ? [applying] : try states(rig.osc, requestID: requestID)
                        let terminalAhead = wall + 0.3 - OSCWire.wallClockNow
                        let recording = try clients.finishRecording()
                        #expect(applying.string(1) == "applying", "the sender hears at once that it is on its way: \(applying)")
                        #expect(applyingAhead > 0.15, "applying arrived only \(applyingAhead) s before the moment")
                        #expect(reports.last?.string(1) == "applied", "\(reports)")
                        #expect(terminalAhead < 0.01, "applied reported \(terminalAhead) s before the moment")
                        return (recording, targetFrame)
                    }) else { return }
                    for (channel, samples) in recording.channels.enumerated() {
                        guard let onset = samples.firstIndex(where: { $0 != samples[0] }) else {
                            Issue.record("ch\(channel + 1): no change recorded for \(target) dB")
                            continue
                        }
                        let distance = frameDistance(recording.frameTime(ofSample: onset), targetFrame)
                        if channel == 0 { distances.append(distance) }
                        report("timed bundle → \(target) dB: first changed frame − scheduled frame, ch\(channel + 1)",
                               Double(distance), unit: "frames")
                        #expect(abs(distance) <= period,
                                "ch\(channel + 1): took effect \(distance) frames from its moment (bound: one period, \(period))")
                    }
                    current = target
                }
                if let worst = distances.map(abs).max() {
                    report("worst |first changed frame − scheduled frame| over \(distances.count) bundles (period \(period))",
                           Double(worst), unit: "frames")
                }
            }
        }

        @Test("Immediately and past timetags apply at once; beyond the horizon, a command in a timed bundle or mismatched nested timetags: /error and nothing applied")
        func atOnceAndRefused() throws {
            let rig = try Rig.start(.process(channels: 2))
            defer { rig.stop() }
            let now = OSCWire.wallClockNow

            // Past (2 s ago) and "immediately": at once.
            let start = ContinuousClock.now
            rig.osc.sendBundle([OSCTestMessage("/output/gain", [.float(-6), .int(1)])], timetag: OSCWire.timetag(unixSeconds: now - 2))
            let past = try states(rig.osc, requestID: 1)
            rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(2000), .int(2)])], timetag: 1)
            let immediate = try states(rig.osc, requestID: 2)
            let elapsed = ContinuousClock.now - start
            #expect(past.last?.string(1) == "applied" && immediate.last?.string(1) == "applied", "\(past) \(immediate)")
            #expect(elapsed < .seconds(1), "past and immediate bundles took \(elapsed)")
            #expect(try rig.osc.query("/output/gain") == .float(-6))
            #expect(try rig.osc.query("/filter/cutoff") == .float(2000))

            // Beyond the 10 s horizon: refused whole.
            rig.osc.sendBundle([OSCTestMessage("/output/gain", [.float(-20), .int(3)]),
                            OSCTestMessage("/filter/cutoff", [.float(500), .int(4)])],
                           timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 11))
            let horizon = try rig.osc.waitFor("/error for a bundle beyond the horizon") { $0.address == "/error" }
            #expect(horizon.match.string(1)?.contains("horizon") == true, "\(horizon.match)")
            #expect(!horizon.before.contains { $0.address == "/state" }, "\(horizon.before)")

            // A command in a timed bundle: refused whole, naming it; its /ping is not answered.
            rig.osc.sendBundle([OSCTestMessage("/output/gain", [.float(-20), .int(5)]), OSCTestMessage("/ping")],
                           timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 1))
            let command = try rig.osc.waitFor("/error for a command in a timed bundle") { $0.address == "/error" }
            expectErrorReply(command.match, for: "/ping")
            #expect(command.match.string(1)?.contains("element 2") == true, "\(command.match)")

            // A nested bundle whose timetag differs from its enclosing one's.
            let outer = OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 1)
            let inner = OSCWire.encodeBundle([OSCTestMessage("/output/gain", [.float(-20), .int(6)])], timetag: outer - (1 << 32))
            rig.osc.sendRaw(OSCWire.padded(Array("#bundle".utf8)) + OSCWire.bigEndian(outer) + OSCWire.bigEndian(Int32(inner.count)) + inner)
            let nested = try rig.osc.waitFor("/error for a mismatched nested timetag") { $0.address == "/error" }
            #expect(nested.match.string(1)?.contains("nested") == true, "\(nested.match)")

            // Nothing of the refused bundles was applied, then or at their moments: a marker set
            // 0.1 s after the last moment (+1 s) is applied after anything due before it, and its
            // answer arrives after theirs; then every other answer arrives before /synced.
            rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(2000), .int(7)])], timetag: outer + (1 << 32) / 10)
            let marker = try rig.osc.waitFor("terminal /state for the marker") { $0.isTerminalState && $0.requestID == 7 }
            #expect(marker.match.string(1) == "applied", "\(marker.match)")
            let later = marker.before + (try rig.osc.sync())
            #expect(!(rig.osc.log.contains { $0.address == "/state" && [3, 4, 5, 6].contains($0.requestID ?? 0) }),
                    "a refused bundle was requested: \(later)")
            #expect(!later.contains { $0.address == "/pong" })
            #expect(try rig.osc.query("/output/gain") == .float(-6))
            #expect(try rig.osc.query("/filter/cutoff") == .float(2000))
        }

        @Test("A change 2 s ahead with a 1 s timeout is applied (its timeout counts from its moment); a later set supersedes a pending one")
        func timeoutCountsFromTheMoment() throws {
            let rig = try Rig.start(.process(channels: 2))
            defer { rig.stop() }
            _ = try rig.osc.ask("/config/timeout", [.float(1)], reply: "/config/timeout")

            let start = ContinuousClock.now
            rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(2500), .int(11)])],
                           timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 2))
            let reports = try states(rig.osc, requestID: 11)
            let elapsed = ContinuousClock.now - start
            #expect(reports.map { $0.string(1) } == ["applying", "applied"], "\(reports)")
            #expect(elapsed >= .milliseconds(1950) && elapsed < .seconds(3), "applied after \(elapsed)")
            #expect(try rig.osc.query("/filter/cutoff") == .float(2500))

            // Arrival order: a set sent after a timed bundle, which takes effect first, wins.
            rig.osc.sendBundle([OSCTestMessage("/output/gain", [.float(-10), .int(21)])],
                           timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 0.5))
            rig.osc.send("/output/gain", .float(-3), .int(22))
            let immediate = try states(rig.osc, requestID: 22)
            let scheduled = try states(rig.osc, requestID: 21)
            #expect(immediate.last?.string(1) == "applied", "\(immediate)")
            #expect(scheduled.last?.string(1) == "superseded", "\(scheduled)")
            try rig.osc.sync()
            #expect(try rig.osc.query("/output/gain") == .float(-3))
        }
    }
}
