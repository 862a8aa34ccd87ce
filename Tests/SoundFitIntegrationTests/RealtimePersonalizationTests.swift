import CAllocationCounter
import CRealtimeSupport
import Foundation
import Testing

extension SoundFitIntegration.RealtimeSafety {
    /// The allocation test of `RealtimeSafety` with hearing personalization running: a profile
    /// submitted over OSC installs a preset, and the burst switches presets, moves the intensity
    /// and toggles the stage while every other stage is on.
    @Test("No heap calls on the JACK thread with personalization running (preset switches, intensity, enable)", .optimizedCodeOnly)
    func noHeapCallsWithPersonalization() throws {
        let rig = try Rig.start(.inProcess(clientName: "sfrtp", label: "soundfit.integration.realtime-personalization",
                                           waitForSession: true,
                                           playing: [Capture.tone(1000, amplitude: 0.05), Capture.noise(seed: 11, amplitude: 0.1)]))
        defer { rig.stop() }
        let (engine, osc, audio) = (rig.engine, rig.osc, rig.audio)

        // Personalization on: N3 → default preset, enabled, intensity 0.75; every other stage on.
        let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
        #expect(presets.address == "/profile/presets", "\(presets)")
        #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
        #expect(try osc.query("/processing/preset") == .string("default"))
        expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
        expectApplied(try osc.set("/ringmod/enabled", .int(1)), "/ringmod/enabled", .int(1))

        // The meters (levels and the personalization's band gains and reductions) run too.
        engine.startMetering()
        var bandReadings = 0

        let variants = ["up", "down", "default"]
        let startCycles = engine.cycleCount
        let deadline = ContinuousClock.now + .seconds(60)
        var sent = 0
        while engine.cycleCount - startCycles < 1500 && ContinuousClock.now < deadline {
            let k = sent / 8
            switch sent % 8 {
            case 0: osc.send("/processing/preset", .string(variants[k % variants.count]))
            case 1: osc.send("/processing/intensity", .float(Float(k % 11) / 10))
            case 2: osc.send("/processing/enabled", .int(k % 4 == 3 ? 0 : 1))
            case 3: osc.send("/filter/cutoff", .float(Float(200 * pow(2, Double(k % 60) / 10))))
            case 4: osc.send("/output/gain", .float(Float(-20 + k % 21)))
            case 5: osc.send("/ringmod/mix", .float(Float(k % 11) / 10))
            case 6: osc.send("/processing/intensity", .float(Float((k + 5) % 11) / 10))
            default: osc.send("/filter/q", .float(Float(0.5 + Double(k % 8) / 4)))
            }
            sent += 1
            if sent % 20 == 0, engine.takeMeterReading()?.channels.first?.bandGains.count == 8 { bandReadings += 1 }
            // Preset generation and preparation happen off the audio thread: after each round of
            // the eight kinds of change, wait until all of them ended (and read the reports).
            if sent % 8 == 0 { try osc.sync(Int32(sent)) }
        }
        // End with personalization alone at full intensity (the default preset).
        for (address, value) in [("/ringmod/enabled", OSCValue.int(0)), ("/filter/enabled", .int(0)),
                                  ("/output/gain", .float(0)), ("/processing/preset", .string("default")),
                                  ("/processing/intensity", .float(1)), ("/processing/enabled", .int(1))] {
            osc.send(address, value)
            _ = try osc.waitForTerminalState(address)
        }
        // 1 kHz at its band's reference level (52.99 dB SPL for tech level 3) gets N3's 19.65 dB.
        let amplitude = sineAmplitude(levelDBSPL: 52.99)
        let captured = try audio.capture([Capture.tone(1000, amplitude: amplitude)], frames: Capture.captureFrames)
        let cycles = engine.cycleCount - startCycles
        let counted = rig.stopAndCount(since: rig.countsBeforeStart)
        osc.drain()  // what is queued: soundfit has exited, so nothing more comes

        report("realtime heap calls (personalization)", Double(counted.realtimeHeapCalls), unit: "calls")
        report("process cycles during OSC changes (personalization)", Double(cycles), unit: "cycles")
        report("OSC changes sent (personalization)", Double(sent), unit: "messages")
        #expect(counted.realtimeHeapCalls == 0, "heap calls inside the JACK process callback with personalization running")
        #expect(bandReadings >= 5, "the band meters did not run: \(bandReadings) readings with bands")
        #expect(cycles >= 1000)
        #expect(counted.sectionsEntered >= 1000)
        #expect(sent >= 100)
        let replies = osc.log
        let appliedPresets = replies.filter { $0.address == "/state" && $0.string(0) == "/processing/preset" && $0.string(1) == "applied" }
        let failed = replies.filter { $0.address == "/state" && $0.string(1) == "failed" }
        let errors = replies.filter { $0.address == "/error" }
        report("preset changes applied during the burst", Double(appliedPresets.count), unit: "changes")
        #expect(appliedPresets.count >= 5, "only \(appliedPresets.count) preset changes were applied")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(errors.isEmpty, "\(errors.prefix(3))")
        // The stage really ran in this process: the prescribed gain at 1 kHz.
        for (channel, samples) in captured.enumerated() {
            let gain = Capture.toneLevel(samples, frequency: 1000, reference: amplitude)
            report("personalization 1 kHz gain after the burst ch\(channel + 1) (target 19.65)", gain)
            #expect(abs(gain - 19.65) <= 1, "ch\(channel + 1): \(gain) dB")
        }
    }
}
