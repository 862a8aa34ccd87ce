import Foundation
import Testing

extension SoundFitIntegration {
    /// `soundfit test` in a pseudo-terminal (Python's `pty`), against the real binary on a jackd.
    @Suite("soundfit test in a terminal") struct HearingTestTerminal {
        /// Runs `argv` in a pseudo-terminal; presses Enter every 0.1 s for `enterSeconds`, then
        /// Ctrl-C; prints the child's output and `EXIT <status>`.
        static let driver = PseudoTerminalDriver.prelude + """
            def key(byte):
                # Waits up to 2 s for the terminal to take the key (reading its output meanwhile).
                end = time.time() + 2
                while time.time() < end:
                    try:
                        os.write(fd, byte)
                        return
                    except BlockingIOError:
                        pump(0.02)
                    except OSError:
                        break
                phase("the terminal did not take %r" % byte)
            def phase(text):
                # Where the driver is, on stderr as it happens: a run that hangs says where.
                sys.stderr.write("driver %.1f s: %s\\n" % (time.time() - began, text))
                sys.stderr.flush()
            began = time.time()
            # Keys only once soundfit test is reading them (it prints its prompt first).
            deadline = time.time() + 20
            while b"Hearing test" not in output and time.time() < deadline:
                if not pump(0.1):
                    break
            phase("prompt seen" if b"Hearing test" in output else "no prompt after 20 s")
            start = time.time()
            while time.time() - start < float(sys.argv[1]):
                key(b"\\r")
                pump(0.1)
            phase("Enter pressed for %s s" % sys.argv[1])
            key(b"\\x03")
            phase("Ctrl-C sent")
            pump(4)
            for _ in range(50):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.1)  # polls a condition (with a deadline)
            else:
                phase("still running 5 s after Ctrl-C: SIGKILL")
                os.kill(pid, 9)
                _, status = os.waitpid(pid, 0)
            phase("ended")
            finish(status)
            """

        @Test("Enter sends /test/heard (presses are counted: cancelled … heard N > 0), Ctrl-C cancels and exits non-zero")
        func enterHearsAndControlCCancels() throws {
            let rig = try Rig.start(.process())
            defer { rig.stop() }
            let osc = rig.osc
            let config = try osc.ask("/test/config", HearingTestThroughJack.fastTiming, reply: "/test/config")
            #expect(config.address == "/test/config", "\(config)")
            _ = try osc.ask("/subscribe", reply: "/subscribed")
            osc.drain()
            let terminal = try ChildProcess(
                label: "soundfit test", executable: "/usr/bin/python3",
                arguments: ["-c", Self.driver, "4", try SoundFitBinary.path(), "test", "--osc-port", "\(rig.ready.oscPort)",
                            "--ear", "left", "--hz", "1000"])
            defer { terminal.stop() }
            #expect(terminal.waitForExit(timeout: .seconds(30)), "soundfit test did not end: \(terminal.standardError)")
            let output = terminal.standardOutput
            #expect(output.contains("EXIT 130"), "\(output)\n\(terminal.standardError)")
            #expect(output.contains("test/state running ear left hz 1000"), "\(output)")
            #expect(output.contains("test/state cancelled"), "\(output)")
            // Nobody else pressed: only Enter can have answered a presentation (`cancelled
            // presentations N heard M`, told once the test is over).
            // The reports reach subscribers on the thread that makes them, so every one the test
            // made by now is in before osc's /synced; the last of them is the terminal one.
            let states = try osc.sync().filter { $0.address == "/test/state" }
            #expect(states.last?.string(0) == "cancelled", "\(states)")
            #expect((states.last?.number(4) ?? 0) > 0, "\(String(describing: states.last)): no press counted")
        }

        @Test("soundfit test --start runs a soundfit of its own for the test and stops it; no answer from a port ends the run")
        func ownInstanceAndNoAnswer() throws {
            let server = try TestJackServer()
            defer { server.stop() }
            let directory = try UniqueName.temporaryDirectory("soundfit-test-start")
            defer { try? FileManager.default.removeItem(at: directory) }
            let terminal = try ChildProcess(
                label: "soundfit test --start", executable: "/usr/bin/python3",
                arguments: ["-c", Self.driver, "2", try SoundFitBinary.path(), "test", "--start", "--ear", "left", "--hz", "1000",
                            "--", "--server", server.name, "--no-start-server", "--channels", "1", "--state-dir", directory.path])
            defer { terminal.stop() }
            #expect(terminal.waitForExit(timeout: .seconds(60)), "soundfit test --start did not end: \(terminal.standardError)")
            let output = terminal.standardOutput
            #expect(output.contains("EXIT 130"), "\(output)\n\(terminal.standardError)")
            #expect(output.contains("test/state running ear left hz 1000"), "\(output)")
            #expect(output.contains("test/state cancelled"), "\(output)")
            // Its own soundfit is gone: nothing runs on that state directory any more.
            let search = try runToEnd(["/usr/bin/pgrep", "-f", "--", "--state-dir \(directory.path)"], timeout: .seconds(30))
            #expect(search.status == 1, "a soundfit started by soundfit test --start still runs: \(search.stdout)")

            // Nothing listens at the discard port: told so, exit 1, no hang.
            let unanswered = try ChildProcess(label: "soundfit test (no answer)", executable: try SoundFitBinary.path(),
                                              arguments: ["test", "--osc-port", "9"])
            defer { unanswered.stop() }
            #expect(unanswered.waitForExit(timeout: .seconds(15)), "soundfit test waited forever for an answer")
            #expect(unanswered.termination?.status == 1 && unanswered.termination?.bySignal == false, "\(String(describing: unanswered.termination))")
            #expect(unanswered.standardOutput.contains("no answer from soundfit at 127.0.0.1:9"), "\(unanswered.standardOutput)")
        }

        @Test("soundfit run --earphone FILE: the hearing test uses that RETSPL table")
        func earphoneFile() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-earphone")
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("earphone.json")
            try Data(#"{"name": "lab-headphones", "retspl": [{"hz": 1000, "db_spl": 6}, {"hz": 4000, "db_spl": 10.5}]}"#.utf8)
                .write(to: file)
            let rig = try Rig.start(.process(arguments: ["--earphone", file.path]))
            defer { rig.stop() }
            let table = try rig.osc.ask("/test/earphone", reply: "/test/earphone")
            #expect(table.arguments == [.string("lab-headphones"), .float(1000), .float(6), .float(4000), .float(10.5),
                                        .string("dB SPL")], "\(table)")
        }
    }
}
