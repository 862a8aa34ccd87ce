import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The server's buffer size changes while SoundFit runs: processing follows, settings stay.
    @Suite("Buffer size") struct BufferSize {
        @Test("After jack_bufsize 128 and 2048 the client reports the new size and still measures −6 dB")
        func bufferSizeChanges() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
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
                    Thread.sleep(forTimeInterval: 0.1)
                }
                #expect(reported == Double(frames), "/status buffer_size after jack_bufsize \(frames)")
                let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                let level = Capture.toneLevel(captured[0], frequency: 1000)
                report("output gain -6 at \(frames) frames", level)
                #expect(abs(level + 6) <= 0.1, "\(frames) frames: \(level) dB")
            }
        }

        private func setBufferSize(_ frames: Int, server: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/jack_bufsize")
            process.arguments = [String(frames)]
            var environment = ProcessInfo.processInfo.environment
            environment["JACK_DEFAULT_SERVER"] = server
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "jack_bufsize \(frames) exited \(process.terminationStatus)")
        }
    }
}
