import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// JACK host behaviour beyond the audio path: buffer-size changes, port latency, --connect.
    @Suite("JACK host") struct JackHost {
        @Test("After jack_bufsize 128 and 2048 the client reports the new size and still measures −6 dB")
        func bufferSizeChanges() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let audio = try rig.audio()
                expectApplied(try rig.osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))
                // 2048 frames is larger than the renderer's chunk (1024): processing is chunked.
                for frames in [128, 2048] {
                    try setBufferSize(frames, server: rig.server.name)
                    var reported: Double?
                    let deadline = ContinuousClock.now + .seconds(10)
                    while ContinuousClock.now < deadline {
                        reported = try rig.osc.status()["buffer_size"]?.number
                        if reported == Double(frames) { break }
                        Thread.sleep(forTimeInterval: 0.1)  // polls a condition (with a deadline)
                    }
                    #expect(reported == Double(frames), "/status buffer_size after jack_bufsize \(frames)")
                    // The steady state at the new size is measured: the graph's first cycles after
                    // the change (the test client's own included) are let pass, counted in cycles.
                    try audio.waitForAudio(seconds: 0.2)
                    let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                    let level = Capture.toneLevel(captured[0], frequency: 1000)
                    report("output gain -6 at \(frames) frames", level)
                    #expect(abs(level + 6) <= 0.1, "\(frames) frames: \(level) dB")
                }
            }
        }

        @Test("--connect wires the physical ports, and the outputs report the capture latency they pass on")
        func physicalConnectionsAndLatency() throws {
            try Rig.run(.process(channels: 2, arguments: ["--connect"])) { rig in
                let audio = try rig.audio()
                #expect(audio.connections(of: "soundfit:input_1").contains("system:capture_1"))
                #expect(audio.connections(of: "soundfit:output_2").contains("system:playback_2"))
                // The dummy backend's capture ports have a capture latency of one period (256
                // frames); SoundFit adds none, so its outputs report the same.
                let status = try rig.osc.status()
                #expect(status["capture_latency"]?.number == 256)
                #expect(status["playback_latency"]?.number ?? 0 >= 256)
            }
        }

        private func setBufferSize(_ frames: Int, server: String) throws {
            try JackTools.run("jack_bufsize", server: server, String(frames))
        }
    }
}
