import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Starting, stopping, losing the server, and refusing bad command lines.
    @Suite("Lifecycle") struct Lifecycle {
        @Test("With no server reachable, soundfit runs its own private jackd and removes it on SIGTERM")
        func embeddedPrivateServer() throws {
            try Rig.run(.privateServer()) { rig in
                #expect(rig.ready.server.hasPrefix("soundfit-private-"), "server=\(rig.ready.server)")
                #expect(rig.ready.server != rig.absentServer)
                let jackds = ProcessTable.pids(commandLineContaining: "jackd --no-realtime -n \(rig.ready.server) ")
                #expect(jackds.count == 1, "private jackd processes: \(jackds)")
                // A newcomer's next step, `jack_lsp`, needs the server's name: the ready line marks the
                // server as SoundFit's own, and the line after it says how JACK's tools reach it.
                #expect(rig.ready.fields["private_server"] == "dummy", "\(rig.ready.fields)")
                let hintLogged = ContinuousClock.now + .seconds(10)  // logged on stderr just after the ready line
                while !rig.soundfit.process.standardError.contains("JACK_DEFAULT_SERVER"), ContinuousClock.now < hintLogged {
                    Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
                }
                #expect(rig.soundfit.process.standardError.contains("`jack_lsp -s \(rig.ready.server)`")
                        && rig.soundfit.process.standardError.contains("`export JACK_DEFAULT_SERVER=\(rig.ready.server)`"),
                        "stderr: \(rig.soundfit.process.standardError)")
                let ports = try JackTools.run("jack_lsp", server: rig.ready.server)
                #expect(ports.contains("\(rig.ready.client):input_1") && ports.contains("\(rig.ready.client):output_2"), "jack_lsp: \(ports)")

                let osc = try OSCTestClient(port: rig.ready.oscPort)
                try osc.ping()
                let status = try osc.status()
                #expect(status["connected"] == .int(1))
                #expect(status["server"] == .string(rig.ready.server))

                // The private server must stay up while soundfit runs (not only right after start):
                // give idle worker threads time to exit (libdispatch reaps them after ~5 s). The
                // reaping is what is tested, and libdispatch reports it to no one: no event.
                Thread.sleep(forTimeInterval: 7)
                let later = try osc.status()
                #expect(later["reconnections"] == .int(0), "private server restarted: \(later)")
                #expect(later["connected"] == .int(1))
                #expect(ProcessTable.pids(commandLineContaining: "jackd --no-realtime -n \(rig.ready.server) ") == jackds,
                        "the private jackd was replaced")

                rig.soundfit.process.send(SIGTERM)
                #expect(rig.soundfit.process.waitForExit(timeout: .seconds(15)), "soundfit did not exit after SIGTERM")
                let termination = rig.soundfit.process.termination
                #expect(termination?.bySignal == false && termination?.status == 0,
                        "exit \(String(describing: termination)); stderr: \(rig.soundfit.process.standardError)")
                #expect(ProcessTable.waitUntilGone("-n \(rig.ready.server) ", timeout: .seconds(5)),
                        "private jackd still running after soundfit exited")
                #expect(ProcessTable.pids(commandLineContaining: rig.absentServer).isEmpty)
            }
        }

        @Test("The private jackd dies with soundfit even after kill -9")
        func privateServerDiesWithKilledSoundFit() throws {
            try Rig.run(.privateServer()) { rig in
                #expect(rig.ready.server.hasPrefix("soundfit-private-"))
                #expect(!ProcessTable.pids(commandLineContaining: "jackd --no-realtime -n \(rig.ready.server) ").isEmpty)

                rig.soundfit.process.send(SIGKILL)
                #expect(rig.soundfit.process.waitForExit(timeout: .seconds(10)))
                #expect(ProcessTable.waitUntilGone("-n \(rig.ready.server) ", timeout: .seconds(10)),
                        "private jackd outlived a SIGKILLed soundfit")
                // jackd 1.9.21, told to stop (PR_SET_PDEATHSIG → SIGTERM) while its only client died
                // abruptly, exits without unregistering from JACK's shared server registry: one of
                // the machine's 8 server slots stays taken (see the report). Recorded, not failed:
                // it is jackd's shutdown path, and a new server of the same name reclaims the slot.
                let leaked = JackRegistry.contains(rig.ready.server)
                withKnownIssue("jackd leaves its registry slot behind when stopped right after its client was killed",
                               isIntermittent: true) {
                    #expect(!leaked, "registry slot of \(rig.ready.server) leaked")
                }
                // Cleanup (and proof the name is usable again): a server of the same name reclaims
                // the slot, and stopping it cleanly releases it.
                try TestJackServer.reclaim(rig.ready.server)
                #expect(!JackRegistry.contains(rig.ready.server))
            }
        }

        @Test("After its server is killed and restarted, soundfit reconnects with its settings")
        func serverRestart() throws {
            try Rig.run(.launched()) { rig in
                let ready = try rig.soundfit.waitForReady()
                let osc = try OSCTestClient(port: ready.oscPort)
                expectApplied(try osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))

                let first = try TestJackClient(server: rig.server.name, channels: 2)
                try first.connect(toClient: ready.client)
                let beforeLevel = Capture.toneLevel(
                    try first.capture([Capture.tone(1000)], frames: Capture.captureFrames)[0], frequency: 1000)
                report("gain -6 before server restart", beforeLevel)
                #expect(abs(beforeLevel + 6) <= 0.1)
                first.close()

                rig.server.kill(signal: SIGKILL)
                _ = try osc.waitForStatus(timeout: .seconds(15)) { $0["connected"] == .int(0) }
                #expect(rig.soundfit.process.isRunning, "soundfit exited when its server died")

                try rig.server.start()
                // What "reconnected with its settings" means: connected, and the session started
                // again. The JACK fields are one snapshot: connected 1 comes with the count.
                let status = try osc.waitForStatus(timeout: .seconds(30)) { snapshot in
                    if snapshot["connected"] == .int(1) {
                        #expect(snapshot["reconnections"]?.number ?? 0 >= 1, "connected without the reconnection counted: \(snapshot)")
                    }
                    return snapshot["connected"] == .int(1) && snapshot["session"] == .string("active")
                }
                #expect(status["reconnections"]?.number ?? 0 >= 1, "\(status)")

                let second = try TestJackClient(server: rig.server.name, name: "sftest2", channels: 2)
                defer { second.close() }
                #expect(Set(second.ports(matching: "^\(ready.client):")) ==
                        ["\(ready.client):input_1", "\(ready.client):input_2",
                         "\(ready.client):output_1", "\(ready.client):output_2", "\(ready.client):midi_in"])
                try second.connect(toClient: ready.client)
                let captured = try second.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                for (channel, samples) in captured.enumerated() {
                    let level = Capture.toneLevel(samples, frequency: 1000)
                    report("gain -6 after server restart ch\(channel + 1)", level)
                    #expect(abs(level + 6) <= 0.1, "channel \(channel + 1): \(level) dB")
                }
                #expect(try osc.query("/output/gain") == .float(-6))
            }
        }

        @Test("Connections made or removed just before the server dies come back exactly", arguments: [SIGKILL, SIGTERM])
        func connectionsJustBeforeServerDeath(signal: Int32) throws {
            try Rig.run(.launched()) { rig in
                let ready = try rig.soundfit.waitForReady()
                let osc = try OSCTestClient(port: ready.oscPort)
                let client = ready.client
                let noted = try #require(try osc.status()["port_connections"]?.number)
                try JackTools.run("jack_connect", server: rig.server.name, "system:capture_1", "\(client):input_1")
                try JackTools.run("jack_connect", server: rig.server.name, "\(client):output_2", "system:playback_2")
                // SoundFit learns of the connections from JACK's port-connect callback on its own
                // thread; /status counts those it noted.
                _ = try osc.waitForStatus(timeout: .seconds(10)) { $0["port_connections"]?.number == noted + 2 }
                // Within a few milliseconds of the server's death: one made, one removed.
                try JackTools.run("jack_connect", server: rig.server.name, "\(client):output_1", "system:playback_1")
                try JackTools.run("jack_disconnect", server: rig.server.name, "\(client):output_2", "system:playback_2")
                rig.server.kill(signal: signal)
                _ = try osc.waitForStatus(timeout: .seconds(15)) { $0["connected"] == .int(0) }

                try rig.server.start()
                _ = try osc.waitForStatus(timeout: .seconds(30)) { $0["connected"] == .int(1) }
                let observer = try TestJackClient(server: rig.server.name, name: "sfobserver", channels: 1)
                defer { observer.close() }
                #expect(observer.connections(of: "\(client):input_1") == ["system:capture_1"])
                #expect(observer.connections(of: "\(client):output_1") == ["system:playback_1"],
                        "a connection made just before the server died was not restored")
                #expect(observer.connections(of: "\(client):output_2").isEmpty,
                        "a connection removed just before the server died came back")
                #expect(observer.connections(of: "\(client):input_2").isEmpty)
            }
        }

        @Test("Bad flags exit non-zero with a message naming the flag and no ready line",
              arguments: [
                  (["--channels", "0"], "--channels"),
                  (["--channels", "65"], "--channels"),
                  (["--osc-port", "70000"], "--osc-port"),
                  (["--bogus-flag"], "--bogus-flag"),
                  (["--log-level", "loud"], "--log-level"),
              ])
        func badFlags(arguments: [String], flag: String) throws {
            let absent = UniqueName.make("sf-absent")
            var full = arguments
            if !arguments.contains("--osc-port") { full += ["--osc-port", "0"] }
            let soundfit = try Rig.refusedStart(full, defaults: false, environment: ["JACK_DEFAULT_SERVER": absent])
            defer { soundfit.stop() }
            // The usage summary lists every flag, so the flag must appear in the message itself.
            let stderr = soundfit.process.standardError
            let message = stderr.split(separator: "\n").filter {
                !$0.hasPrefix("Usage:") && !$0.contains("for more information")
            }
            #expect(message.contains { $0.contains(flag) }, "stderr does not explain \(flag): \(stderr)")
            #expect(ProcessTable.pids(commandLineContaining: "soundfit-private-\(soundfit.process.pid)-").isEmpty)
        }

        @Test("--no-start-server with a nonexistent --server fails, names the server, leaves no jackd")
        func noStartServerWithMissingServer() throws {
            let missing = UniqueName.make("sf-missing")
            let soundfit = try Rig.refusedStart(["--osc-port", "0", "--server", missing, "--no-start-server"], defaults: false,
                                                environment: ["JACK_DEFAULT_SERVER": UniqueName.make("sf-absent")])
            defer { soundfit.stop() }
            let stderr = soundfit.process.standardError
            #expect(stderr.contains(missing), "stderr does not name the server: \(stderr)")
            #expect(ProcessTable.pids(commandLineContaining: "soundfit-private-\(soundfit.process.pid)-").isEmpty)
            #expect(ProcessTable.pids(commandLineContaining: "-n \(missing)").isEmpty)
        }
    }
}
