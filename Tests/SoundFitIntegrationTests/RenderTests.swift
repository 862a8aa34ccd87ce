import Foundation
import Glibc
import SoundFitAudioFile
import Testing

extension SoundFitIntegration {
    /// `soundfit render`: offline processing of files through the real binary, compared with
    /// what the same binary plays in a real JACK graph.
    @Suite("Offline rendering") struct Render {
        /// The test signal: deterministic noise plus a 1 kHz tone, one second, low enough that
        /// the output safety limit stays out of the way.
        static func signal() -> [Float] {
            let noise = Capture.noise(seed: 7, amplitude: 0.02)
            let tone = Capture.tone(1000, amplitude: 0.02)
            return zip(noise, tone).map { $0 + $1 }
        }

        static func writeFile(_ channels: [[Float]], to url: URL, format: AudioFileFormat = .wav,
                              encoding: AudioSampleEncoding = .float) throws {
            let writer = try AudioFileWriter(path: url.path, format: format, encoding: encoding,
                                             sampleRate: TestJackServer.sampleRate, channelCount: channels.count)
            try writer.write(channels)
            try writer.commit()
        }

        static func readFile(_ url: URL) throws -> (channels: [[Float]], reader: AudioFileReader) {
            let reader = try AudioFileReader(path: url.path)
            return (try reader.read(frames: reader.frameCount), reader)
        }

        /// Settings both paths get: a hearing profile at tech level 2, a factory patch that
        /// turns the personalization on, then a peak filter, an output gain and an intensity.
        static let sets: [(String, OSCValue, String)] = [
            ("/filter/enabled", .int(1), "1"), ("/filter/type", .string("peak"), "peak"),
            ("/filter/cutoff", .float(2500), "2500"), ("/filter/gain", .float(6), "6"),
            ("/output/gain", .float(-4), "-4"), ("/processing/intensity", .float(0.9), "0.9"),
        ]

        @Test("render's output equals the JACK path's for the same input and settings, sample by sample")
        func renderEqualsJackPath() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-render")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let signal = Self.signal()
            let input = directory.appendingPathComponent("in.wav"), output = directory.appendingPathComponent("out.wav")
            try Self.writeFile([signal, signal], to: input)

            // Offline.
            var arguments = ["render", input.path, output.path, "--profile", profile.path, "--tech-level", "2",
                             "--patch", "Speech clarity"]
            for (address, _, text) in Self.sets { arguments += ["--set", "\(address)=\(text)"] }
            let render = try runToEnd(try SoundFitBinary.path(), arguments)
            #expect(render.status == 0, "stderr: \(render.stderr)")
            print("render: \(render.stdout)")
            #expect(render.stdout.contains("real time"), "\(render.stdout)")
            let (rendered, reader) = try Self.readFile(output)
            #expect(reader.channelCount == 2 && reader.sampleRate == 48000 && reader.encoding == .float)
            #expect(rendered.count == 2 && rendered[0].count == signal.count)

            // Through JACK: the same binary, the same settings over OSC, the same samples played.
            try Rig.run(.server()) { rig in
                let soundfit = try SoundFitProcess(arguments: ["--server", rig.server.name, "--channels", "2",
                                                               "--profile", profile.path, "--tech-level", "2"])
                defer { soundfit.stop() }
                let ready = try soundfit.waitForReady()
                let osc = try OSCTestClient(port: ready.oscPort)
                try osc.waitForSession()
                osc.send("/patch/load", .string("Speech clarity"))
                _ = try osc.waitFor("/patch/current") { $0.address == "/patch/current" }
                for (address, value, _) in Self.sets {
                    let states = try osc.set(address, value)
                    #expect(states.last?.string(1) == "applied", "\(address): \(states)")
                }
                let clients = try TimedAudioClients(server: rig.server.name, channels: 2, playCapacity: signal.count,
                                                    recordCapacity: 3 * signal.count)
                defer { clients.close() }
                try clients.connect(through: ready.client)
                // Idle long enough for every ramp and level detector to come to rest, as render's
                // settling does: 3 s of audio, counted in JACK cycles.
                try clients.waitForAudio(seconds: 3)
                var best: (offset: Int, difference: Float) = (0, .infinity)
                for attempt in 1...3 {
                    try clients.startRecording(frames: 3 * signal.count)
                    try clients.play(signal)
                    let recording = try clients.finishRecording()
                    try clients.play([Float](repeating: 0, count: 256))
                    // Player and recorder start at cycle boundaries: the signal's first frame is at
                    // a whole number of periods into the recording.
                    best = (0, .infinity)
                    for offset in stride(from: 0, through: 2 * signal.count - 1, by: recording.period)
                    where offset + signal.count <= recording.channels[0].count {
                        var worst: Float = 0
                        for channel in 0..<2 {
                            for frame in 0..<signal.count {
                                worst = max(worst, abs(recording.channels[channel][offset + frame] - rendered[channel][frame]))
                                if worst >= best.difference { break }
                            }
                        }
                        if worst < best.difference { best = (offset, worst) }
                    }
                    if recording.isContiguous && recording.xruns == 0 { break }
                    print("note: recording with a skipped cycle or xrun (attempt \(attempt)); recording again")
                    try clients.waitForAudio(seconds: 3)  // the same rest as above
                }
                let peak = rendered[0].map(abs).max() ?? 0
                report("largest |JACK − render| over 2 × 48000 samples", Double(best.difference) * 1e6, unit: "× 1e-6 (linear)")
                report("peak of the rendered output", Double(peak), unit: "(linear)")
                #expect(peak > 0.01, "the rendered output is (nearly) silent")
                // Float rounding: the two paths run the same code on the same samples. The residue
                // measured is 2.9e-6…4.8e-6 (3 runs) at a peak of 0.97 (about −106 dB); where it arises is not
                // pinned down (most likely state that silence leaves after 3 s here and 10 s in render).
                #expect(best.difference <= 1e-5, "render and JACK differ by up to \(best.difference) (best offset \(best.offset))")
            }
        }

        @Test("render keeps the input's format: FLAC 16-bit in, FLAC 16-bit and AIFF out, and --format")
        func formats() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-render")
            defer { try? FileManager.default.removeItem(at: directory) }
            let signal = Self.signal()
            let input = directory.appendingPathComponent("in.flac")
            try Self.writeFile([signal], to: input, format: .flac, encoding: .pcm16)
            for (name, extra, format) in [("out.flac", [String](), "FLAC"), ("out.aiff", [], "AIFF"),
                                          ("out.data", ["--format", "wav"], "WAV")] {
                let output = directory.appendingPathComponent(name)
                let result = try runToEnd(try SoundFitBinary.path(),
                                          ["render", input.path, output.path, "--set", "/output/gain=-6"] + extra)
                #expect(result.status == 0, "\(name): \(result.stderr)")
                let (channels, reader) = try Self.readFile(output)
                #expect(reader.channelCount == 1 && reader.encoding == .pcm16, "\(name) (\(format)): \(reader.encoding)")
                // −6 dB through an otherwise transparent chain.
                let ratio = (channels[0].map { abs($0) }.max() ?? 0) / (signal.map { abs($0) }.max() ?? 1)
                #expect(abs(20 * log10(Double(ratio)) + 6) < 0.1, "\(name): gain \(20 * log10(Double(ratio))) dB")
            }
        }

        @Test("bad inputs get a message and a non-zero exit, and no output file is left")
        func refusals() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-render")
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = directory.appendingPathComponent("in.wav")
            try Self.writeFile([Self.signal()], to: input)
            let notAudio = directory.appendingPathComponent("text.wav")
            try Data("not a sound file\n".utf8).write(to: notAudio)
            let output = directory.appendingPathComponent("out.wav")
            let cases: [(String, [String], String)] = [
                ("not an audio file", ["render", notAudio.path, output.path], "cannot read \(notAudio.path)"),
                ("missing input", ["render", directory.appendingPathComponent("missing.wav").path, output.path], "cannot read"),
                ("a directory as input", ["render", directory.path, output.path], "cannot read"),
                ("unknown --set address", ["render", input.path, output.path, "--set", "/filter/nope=1"], "unknown address /filter/nope"),
                ("out-of-range value", ["render", input.path, output.path, "--set", "/filter/cutoff=30000"], "out of range"),
                ("wrong kind of value", ["render", input.path, output.path, "--set", "/filter/type=bright"], "unknown value 'bright'"),
                ("read-only parameter", ["render", input.path, output.path, "--set", "/processing/fitting=2"], "read-only"),
                ("no =", ["render", input.path, output.path, "--set", "/filter/cutoff"], "expected /address=value"),
                ("unknown patch", ["render", input.path, output.path, "--patch", "No such patch"], "No such patch"),
                ("patch that needs a profile", ["render", input.path, output.path, "--patch", "Speech clarity"], "hearing profile"),
                ("unwritable output", ["render", input.path, directory.appendingPathComponent("missing/out.wav").path], "cannot write"),
                ("unknown output format", ["render", input.path, directory.appendingPathComponent("out.mp3").path], "extension"),
                ("bad tech level", ["render", input.path, output.path, "--tech-level", "9"], "--tech-level must be 1…4"),
            ]
            for (label, arguments, hint) in cases {
                let result = try runToEnd(try SoundFitBinary.path(), arguments)
                #expect(result.status != 0, "\(label): exit \(result.status)")
                #expect(result.stderr.contains(hint), "\(label): stderr \(result.stderr)")
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                #expect(left == ["in.wav", "text.wav"], "\(label): files left \(left)")
            }
        }
    }
}
