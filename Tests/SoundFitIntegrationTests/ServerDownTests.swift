import Foundation
import Glibc
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// Issue 26: while no JACK server is connected, filter, ring modulator and output values are
    /// the engine's values at once (a patch loads, a set ends `applied`) and are in effect when
    /// the server returns; the patch's session values wait for the next session.
    @Suite("JACK server down") struct ServerDown {
        @Test("JACK down: /patch/load and a set apply at once; the server back renders them")
        func patchAndSetWhileServerDown() throws {
            let server = try TestJackServer()
            defer { server.stop() }
            let soundfit = try SoundFitProcess(arguments: ["--server", server.name, "--no-start-server", "--channels", "2"])
            defer { soundfit.stop() }
            let ready = try soundfit.waitForReady()
            let osc = try OSCTestClient(port: ready.oscPort)
            try osc.ping()
            _ = try osc.waitForSession()
            #expect(try osc.query("/filter/enabled") == .int(0))

            server.kill(signal: SIGKILL)
            _ = try osc.waitForStatus(timeout: .seconds(15)) {
                $0["connected"] == .int(0) && $0["session"] == .string("inactive")
            }

            // The patch loads whole: its kernel values at once, its session values pending.
            var start = ContinuousClock.now
            let current = try osc.request("/patch/load", [.string("Lowpass 1 kHz")], reply: "/patch/current", timeout: .seconds(20))
            var elapsed = ContinuousClock.now - start
            report("/patch/load without a server: time to the answer", Double(elapsed / .milliseconds(1)), unit: "ms")
            #expect(current.address == "/patch/current", "\(current)")
            #expect(current.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(0), .int(1)], "\(current)")
            #expect(elapsed < .seconds(2), "the load waited \(elapsed) (a timeout?)")
            #expect(try osc.query("/filter/enabled") == .int(1))
            #expect(try osc.query("/filter/cutoff") == .float(1000))

            // One set follows the same rule.
            start = ContinuousClock.now
            let reports = try osc.setWithID("/output/gain", .float(-12), id: 41)
            elapsed = ContinuousClock.now - start
            #expect(reports.last?.string(1) == "applied", "\(reports)")
            #expect(elapsed < .seconds(2), "the set waited \(elapsed)")
            #expect(try osc.query("/output/gain") == .float(-12))

            // The server returns: the session gets the patch's values, the audio has the rest.
            try server.start()
            _ = try osc.waitForStatus(timeout: .seconds(30)) {
                $0["connected"] == .int(1) && $0["session"] == .string("active")
            }
            let settled = waitForCondition(timeout: .seconds(10)) {
                (try? osc.request("/patch/current", [], reply: "/patch/current"))?.arguments.last == .int(0)
            }
            #expect(settled != nil, "the patch's session values are still pending after the session started")
            let client = try TestJackClient(server: server.name, channels: 2)
            defer { client.close() }
            try client.connect(toClient: ready.client)
            let mix = zip(Capture.tone(250), Capture.tone(4000)).map { $0 + $1 }
            let reference = CookbookBiquad(kind: .lpf, f0: 1000, q: 0.7071, dbGain: 0, fs: Capture.sampleRate)
            let expected4k = reference.magnitudeDecibels(atFrequency: 4000, fs: Capture.sampleRate) - 12
            let expected250 = reference.magnitudeDecibels(atFrequency: 250, fs: Capture.sampleRate) - 12
            for (channel, samples) in try client.capture([mix], frames: Capture.captureFrames).enumerated() {
                let high = Capture.toneLevel(samples, frequency: 4000), low = Capture.toneLevel(samples, frequency: 250)
                report("server back: 4 kHz ch\(channel + 1) (expected \(String(format: "%.2f", expected4k)))", high)
                report("server back: 250 Hz ch\(channel + 1) (expected \(String(format: "%.2f", expected250)))", low)
                #expect(abs(high - expected4k) <= 0.1, "ch\(channel + 1): 4 kHz at \(high) dB, expected \(expected4k)")
                #expect(abs(low - expected250) <= 0.1, "ch\(channel + 1): 250 Hz at \(low) dB, expected \(expected250)")
            }
        }
    }
}
