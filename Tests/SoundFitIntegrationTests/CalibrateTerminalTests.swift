import Foundation
import Testing

extension SoundFitIntegration {
    /// `soundfit calibrate` in a pseudo-terminal (Python's `pty`) against the real binary on a
    /// jackd: readings typed at its prompts, a bad one asked again, Enter alone skipping, and
    /// Ctrl-C or the end of input stopping the tone.
    @Suite("soundfit calibrate in a terminal") struct CalibrateTerminal {
        /// Runs argv[2:] in a pseudo-terminal. argv[1]: JSON steps `[text, count, keys]`: once
        /// the output holds `text` `count` times, type `keys`. Then waits for the child to exit
        /// (SIGKILL after 10 s) and prints its output and `EXIT <status>`.
        static let driver = PseudoTerminalDriver.prelude + """
            steps = json.loads(sys.argv[1])
            for text, count, keys in steps:
                deadline = time.time() + 20
                while output.count(text.encode()) < count and time.time() < deadline:
                    if not pump(0.05):
                        break
                if output.count(text.encode()) < count:
                    sys.stderr.write("driver: %r never appeared %d times\\n" % (text, count))
                    break
                os.write(fd, keys.encode())
                pump(0.05)
            status = None
            for _ in range(200):
                pump(0.05)
                done, code = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = code
                    break
            if status is None:
                os.kill(pid, 9)
                _, status = os.waitpid(pid, 0)
            pump(0.2)
            finish(status)
            """

        static func run(_ rig: SoundFitRig, steps: [(String, Int, String)], _ arguments: [String]) throws -> String {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: steps.map { [$0.0, $0.1, $0.2] }), as: UTF8.self)
            let terminal = try ChildProcess(
                label: "soundfit calibrate", executable: "/usr/bin/python3",
                arguments: ["-c", driver, json, try SoundFitBinary.path(), "calibrate", "--osc-port", "\(rig.ready.oscPort)"]
                    + arguments)
            defer { terminal.stop() }
            #expect(terminal.waitForExit(timeout: .seconds(60)), "soundfit calibrate did not end: \(terminal.standardError)")
            return terminal.standardOutput + terminal.standardError
        }

        @Test("A reading per prompt becomes the correction; a bad one is asked again, Enter skips; Ctrl-C and end of input stop the tone")
        func walksThrough() throws {
            let rig = try Rig.start(.process())
            defer { rig.stop() }
            let osc = rig.osc
            let audio = try rig.audio()
            let prompt = "meter reads? "

            let done = try Self.run(rig, steps: [(prompt, 1, "abc\r"), (prompt, 2, "86\r"), (prompt, 3, "\r")],
                                    ["--ear", "left", "--hz", "1000", "4000", "--level", "80"])
            #expect(done.contains("left 1000 Hz, 80 dB SPL meant: meter reads?"), "\(done)")
            #expect(done.contains("'abc' is not a number"), "\(done)")
            #expect(done.contains("correction 6 dB kept"), "\(done)")
            #expect(done.contains("skipped") && done.contains("Done"), "\(done)")
            #expect(done.contains("EXIT 0"), "\(done)")
            #expect(try CalibrationThroughJack.corrections(osc, "left") == [1000: 6])
            let after = try CalibrationThroughJack.measurePlaying(audio, hz: 4000)
            #expect(after.left < -80 && after.right < -80, "a tone plays after the run: \(after)")

            // Ctrl-C at a prompt (the tone was answered, so it played): exit 130, the tone is off.
            let interrupted = try Self.run(rig, steps: [(prompt, 1, "\u{03}")], ["--ear", "right", "--hz", "2000", "--level", "80"])
            #expect(interrupted.contains("right 2000 Hz, 80 dB SPL meant"), "\(interrupted)")
            #expect(interrupted.contains("stopped: the tone is off") && interrupted.contains("EXIT 130"), "\(interrupted)")
            let stopped = try CalibrationThroughJack.measurePlaying(audio, hz: 2000)
            #expect(stopped.right < -80, "the tone still plays after Ctrl-C: \(stopped)")

            // The end of input (Ctrl-D) likewise.
            let ended = try Self.run(rig, steps: [(prompt, 1, "\u{04}")], ["--ear", "right", "--hz", "500", "--level", "80"])
            #expect(ended.contains("end of input: the tone is off") && ended.contains("EXIT 130"), "\(ended)")
            let silent = try CalibrationThroughJack.measurePlaying(audio, hz: 500)
            #expect(silent.right < -80, "the tone still plays after the end of input: \(silent)")

            // A level above the output safety limit: soundfit's reason, exit 1.
            let refused = try Self.run(rig, steps: [], ["--ear", "left", "--hz", "1000", "--level", "120"])
            #expect(refused.contains("output safety limit 100 dB SPL") && refused.contains("EXIT 1"), "\(refused)")
            #expect(try CalibrationThroughJack.corrections(osc, "right").isEmpty)
        }
    }
}
