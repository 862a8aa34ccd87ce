import Foundation
import SoundFitAudioFile
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// PipeWire as the JACK server, as Debian 12 ships it (0.3.65, `pw-jack`),
    /// headless in the test's own runtime directory (`HeadlessPipeWire`). PipeWire 0.3 sends only
    /// the plain shutdown notice; before SoundFit listened for it, a stopped PipeWire went
    /// unnoticed and SoundFit never came back.
    @Suite("PipeWire as the JACK server") struct PipeWireServer {
        /// `jack_simple_client` plays 0.2 · sin at 48000/200 = 240 Hz on `output1` and three times
        /// that, 720 Hz, on `output2` (a 200-sample table stepped by 1 and by 3).
        static let playerAmplitude = 0.2

        private func waitFor(_ what: String, timeout: Duration = .seconds(15), _ condition: () throws -> Bool) throws {
            let deadline = ContinuousClock.now + timeout
            while try !condition() {
                guard ContinuousClock.now < deadline else { throw IntegrationError("\(what) within \(timeout)") }
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
            }
        }

        @Test("Under pw-jack: ready line, ports and metadata, a set applied, audio through the lowpass exact, a quantum change followed, and PipeWire stopped and restarted with soundfit back, its values kept")
        func pipeWireComesAndGoes() throws {
            try #require(HeadlessPipeWire.isInstalled, "scripts/setup.sh installs pipewire, wireplumber, pipewire-jack and dbus")
            let pipewire = try HeadlessPipeWire()
            defer { pipewire.close() }
            let soundfit = try SoundFitProcess(arguments: ["--no-start-server", "--connect", "--name", "sfpw", "--channels", "2"],
                                               environment: pipewire.environment)
            defer { soundfit.stop() }
            let ready = try soundfit.waitForReady()
            #expect(ready.client == "sfpw" && ready.server == "default", "\(ready)")
            let osc = try OSCTestClient(port: ready.oscPort)
            try osc.waitForSession()

            let ports = try pipewire.jack("jack_lsp")
            for port in ["sfpw:input_1", "sfpw:input_2", "sfpw:output_1", "sfpw:output_2", "sfpw:midi_in"] {
                #expect(ports.contains(port), "\(port) missing from jack_lsp: \(ports)")
            }
            // --connect: PipeWire marks a device's ports physical, the null sink's too.
            #expect(try pipewire.jack("jack_lsp", "-c", "sfpw:output_2").contains("sfnull:playback_FR"))
            let metadata = try pipewire.jack("jack_property", "-p", "-l", "sfpw:output_2")
            #expect(metadata.contains("pretty-name value: Right ear out 1"), "\(metadata)")

            expectApplied(try osc.set("/filter/cutoff", .float(240)), "/filter/cutoff", .float(240))
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))

            let player = try ChildProcess(label: "jack_simple_client", executable: "/usr/bin/jack_simple_client", arguments: [],
                                          environment: pipewire.environment)
            defer { player.stop() }
            try waitFor("jack_simple_client's ports") { try pipewire.jack("jack_lsp").contains("jack_simple_client:output2") }
            try pipewire.jack("jack_connect", "jack_simple_client:output1", "sfpw:input_1")
            try pipewire.jack("jack_connect", "jack_simple_client:output2", "sfpw:input_2")
            let recording = try UniqueName.temporaryDirectory("pipewire-audio").appendingPathComponent("out.wav")
            defer { try? FileManager.default.removeItem(at: recording.deletingLastPathComponent()) }
            try pipewire.jack("jack_rec", "-f", recording.path, "-d", "2", "-b", "32", "sfpw:output_1", "sfpw:output_2")
            let reader = try AudioFileReader(path: recording.path)
            let channels = try reader.read(frames: reader.frameCount)
            #expect(reader.sampleRate == 48000)
            let reference = CookbookBiquad(kind: .lpf, f0: 240, q: 0.7071, dbGain: 0, fs: 48000)
            for (channel, frequency) in [(0, 240.0), (1, 720.0)] {
                let measured = Capture.toneLevel(channels[channel], frequency: frequency, reference: Self.playerAmplitude)
                let expected = reference.magnitudeDecibels(atFrequency: frequency, fs: 48000)
                report("PipeWire: \(Int(frequency)) Hz through the 240 Hz lowpass (expected \(String(format: "%.3f", expected)))",
                       measured)
                #expect(abs(measured - expected) <= 0.1, "channel \(channel + 1): \(measured) dB, expected \(expected) dB")
            }

            try pipewire.forceQuantum(128)
            let quantum = try osc.waitForStatus(timeout: .seconds(10)) { $0["buffer_size"] == .int(128) }
            #expect(quantum["connected"] == .int(1))

            pipewire.stop()
            _ = try osc.waitForStatus(timeout: .seconds(15)) { $0["connected"] == .int(0) }
            #expect(soundfit.process.isRunning, "soundfit exited when PipeWire stopped")
            try pipewire.start()
            let back = try osc.waitForStatus(timeout: .seconds(30)) { $0["connected"] == .int(1) }
            #expect(back["reconnections"]?.number ?? 0 >= 1, "\(back)")
            try waitFor("soundfit's ports in the new graph") {
                let ports = try pipewire.jack("jack_lsp")
                return ports.contains("sfpw:input_1") && ports.contains("sfpw:output_2")
            }
            #expect(try osc.query("/filter/cutoff") == .float(240))
            #expect(try osc.query("/filter/enabled") == .int(1))
            // The sink is created again after soundfit is back: --connect links it when it appears.
            try waitFor("soundfit linked to the null sink again") {
                try pipewire.jack("jack_lsp", "-c", "sfpw:output_1").contains("sfnull:playback_FL")
            }
            // Port metadata after the restart: set again when soundfit came back before
            // WirePlumber's metadata existed (its descriptions were refused). In about one
            // restart in four, pipewire-jack 0.3.65 accepts them, shows them to soundfit's own
            // read-back, and no other client ever sees them; setting them again does not help.
            let described = (try? waitFor("port metadata after the restart") {
                (try? pipewire.jack("jack_property", "-p", "-l", "sfpw:output_2"))?.contains("pretty-name value: Right ear out 1") == true
            }) != nil
            withKnownIssue("pipewire-jack 0.3.65 loses port metadata set while WirePlumber starts", isIntermittent: true) {
                #expect(described, "no port metadata after the restart")
            }
            let log = soundfit.process.standardError
            #expect(log.contains("JACK server 'default' went away"), "\(log.suffix(2000))")
        }

        @Test("Under pw-jack with no PipeWire running: a message naming PipeWire and pw-jack, exit 2, and no private jackd")
        func pipeWireDown() throws {
            try #require(HeadlessPipeWire.isInstalled, "scripts/setup.sh installs pipewire-jack")
            let runtime = try UniqueName.temporaryDirectory("pipewire-none")
            defer { try? FileManager.default.removeItem(at: runtime) }
            let soundfit = try SoundFitProcess(arguments: ["--name", "sfpwdown", "--no-http"], environment: [
                "XDG_RUNTIME_DIR": runtime.path, "LD_LIBRARY_PATH": HeadlessPipeWire.jackLibraryFolder,
            ])
            defer { soundfit.stop() }
            #expect(soundfit.process.waitForExit(timeout: .seconds(20)), "soundfit did not exit")
            #expect(soundfit.process.termination?.status == 2)
            let log = soundfit.process.standardError
            #expect(log.contains("PipeWire's JACK library is in use") && log.contains("pw-jack"), "\(log)")
            #expect(!log.contains("starting a private dummy-backend server"), "\(log)")
        }
    }
}
