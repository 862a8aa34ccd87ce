import CJack
import Foundation
import Glibc
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// One SoundFit per listener across machines: JACK's netjack2 between network namespaces
    /// (the recipe of docs/network.md), controlled from the master over OSC and OSCQuery.
    @Suite("netjack2") struct NetJack {
        static let slaveCount = 2
        static let masterAddress = "10.77.0.1"
        static let oscPort: UInt16 = 7700
        static let period = 256

        /// One listener's machine: its netjack2 slave, its SoundFit, and the master's view of both.
        final class Listener: @unchecked Sendable {
            let box: NetJackBoxes.Box
            /// The slave's name (`jackd -d net -n`); the master names its client after it.
            let slaveName: String
            let server = "listener"
            let slave: ChildProcess
            var soundfit: SoundFitProcess?
            var osc: OSCTestClient?
            var httpPort: UInt16 = 0

            init(box: NetJackBoxes.Box, boxes: NetJackBoxes) throws {
                self.box = box
                slaveName = "listener-\(box.index)"
                let command = boxes.wrapper(for: box) + [
                    "/usr/bin/jackd", "--no-realtime", "-n", server, "-d", "net", "-a", NetJack.masterAddress,
                    "-n", slaveName, "-s"]
                slave = try ChildProcess(label: "jackd \(slaveName)", executable: command[0], arguments: Array(command.dropFirst()))
            }

            func stop() {
                soundfit?.stop()
                slave.stop()
            }
        }

        @Test("A master, two slaves, a SoundFit on each: OSC and OSCQuery from the master, the lowpass on the cookbook through both, back after the master is killed and restarted")
        func masterAndTwoSlaves() throws {
            let boxes = try NetJackBoxes(slaves: Self.slaveCount)
            defer { boxes.stop() }
            let master = try TestJackServer(period: Self.period, wrapper: boxes.wrapper(for: boxes.master))
            defer {
                // Clean-up, bounded: once, jack_unload waited 300 s on a lock of jackd2's metadata
                // database that the master killed during the test had held (a futex no one
                // releases). The master stops either way.
                _ = try? JackTools.run("jack_unload", server: master.name, "netmanager", timeout: .seconds(10))
                master.stop()
            }
            try loadNetManager(master)
            let probe = try TestJackClient(server: master.name, name: "sfnet-probe", channels: 1)
            defer { probe.close() }

            var listeners: [Listener] = []
            defer { for listener in listeners.reversed() { listener.stop() } }
            for box in boxes.slaves {
                let listener = try Listener(box: box, boxes: boxes)
                listeners.append(listener)
                // The slave opens its server once the master answered: its client shows up there.
                _ = try waitForNetClient(of: listener, on: probe, timeout: .seconds(30))
            }

            // A SoundFit on each slave, listening on the slave's address for the master only.
            for listener in listeners {
                let soundfit = try SoundFitProcess(
                    arguments: ["--server", listener.server, "--no-start-server", "--connect", "--channels", "2",
                                "--osc-host", listener.box.address, "--osc-allow", Self.masterAddress,
                                "--osc-port", "\(Self.oscPort)"],
                    defaults: false, httpDefault: false, wrapper: boxes.wrapper(for: listener.box))
                listener.soundfit = soundfit
                let endpoint = try soundfit.oscEndpoint()
                #expect(endpoint.host == listener.box.address && endpoint.port == Self.oscPort, "\(endpoint)")
                listener.httpPort = try httpPort(of: soundfit)
                // OSC from the master's address to the slave's.
                let osc = OSCTestClient(descriptor: try boxes.socket(.udp), port: Self.oscPort,
                                        serverAddress: listener.box.hostOrderAddress)
                #expect(osc.localAddress == boxes.master.hostOrderAddress)
                listener.osc = osc
                try osc.ping()
                // An exposed port answers /status only to a confirmed address (OSC.md, Security).
                try osc.confirmSource()
                try osc.waitForSession()
            }

            // OSCQuery from the master: HOST_INFO names the address the master reached.
            for listener in listeners {
                let (status, info) = try PlainHTTP.getJSON(
                    port: listener.httpPort, host: listener.box.hostOrderAddress, "/?HOST_INFO",
                    makeSocket: { try boxes.socket(.tcp) })
                #expect(status == 200)
                #expect(info["OSC_IP"] as? String == listener.box.address, "\(info)")
                #expect((info["OSC_PORT"] as? NSNumber)?.intValue == Int(Self.oscPort), "\(info)")
            }

            // Round trip through each slave, filter off: an impulse comes back bit for bit.
            var audio = try patchedClient(master: master, listeners: listeners, probe: probe)
            defer { audio.close() }
            for latency in try roundTrip(audio, listeners: listeners) {
                report("netjack2 round trip master → \(latency.slave) → SoundFit → master", Double(latency.frames) / Double(Self.period),
                       unit: "periods (\(latency.frames) frames)")
            }

            // The lowpass, set over OSC from the master on both SoundFits.
            for listener in listeners {
                let osc = try #require(listener.osc)
                expectApplied(try osc.set("/filter/type", .string("lowpass")), "/filter/type", .string("lowpass"), changed: false)
                expectApplied(try osc.set("/filter/cutoff", .float(1000)), "/filter/cutoff", .float(1000), changed: false)
                expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
                let (status, value) = try PlainHTTP.getJSON(
                    port: listener.httpPort, host: listener.box.hostOrderAddress, "/filter/enabled?VALUE",
                    makeSocket: { try boxes.socket(.tcp) })
                #expect(status == 200 && (value["VALUE"] as? [NSNumber])?.first?.intValue == 1, "\(value)")
            }
            try expectLowpass(audio, listeners: listeners, label: "")

            // --osc-allow: another listener's machine changes nothing and gets no answer.
            let neighbour = OSCTestClient(descriptor: try boxes.socket(.udp, in: listeners[1].box), port: Self.oscPort,
                                          serverAddress: listeners[0].box.hostOrderAddress)
            neighbour.send("/filter/cutoff", .float(500))
            neighbour.send("/ping")
            // They did arrive, and were refused: SoundFit logs the sender when it drops its packet.
            // The query, sent after that line, is handled after both packets (one receive thread,
            // arrival order): anything they would have been answered was sent by its reply.
            #expect(try #require(listeners[0].soundfit).process.waitForOutput(timeout: .seconds(10), fromStandardError: true) {
                $0.contains("ignored OSC from \(listeners[1].box.address):") ? true : nil
            } == true)
            #expect(try #require(listeners[0].osc).query("/filter/cutoff") == .float(1000))
            #expect(neighbour.collect(for: .zero).isEmpty)

            // The master dies (SIGKILL) and comes back with its netmanager.
            audio.close()
            probe.close()
            master.kill(signal: SIGKILL)
            for listener in listeners {
                let soundfit = try #require(listener.soundfit)
                #expect(soundfit.process.waitForOutput(timeout: .seconds(30), fromStandardError: true) {
                    $0.contains("JACK port system:capture_1 went away") ? true : nil
                } == true, "listener \(listener.box.index) saw no port go away")
                // The slave's server stays: SoundFit keeps its session while the master is away.
                let osc = try #require(listener.osc)
                osc.send("/session")
                let session = try osc.waitFor("/session") { $0.address == "/session" }.match
                #expect(session.string(0) == "active", "\(session)")
                #expect(try osc.status()["connected"] == .int(1))
            }
            let restarted = ContinuousClock.now
            try master.start()
            try loadNetManager(master)
            let probeAgain = try TestJackClient(server: master.name, name: "sfnet-probe", channels: 1)
            defer { probeAgain.close() }
            for listener in listeners {
                _ = try waitForNetClient(of: listener, on: probeAgain, timeout: .seconds(60))
                // SoundFit's connections on the slave are back (the slave re-created its system ports).
                try waitForConnections(listener, boxes: boxes)
                let osc = try #require(listener.osc)
                try osc.waitForSession()
                let status = try osc.status()
                #expect(status["connected"] == .int(1), "\(status)")
                #expect(try osc.query("/filter/enabled") == .int(1))
                #expect(try osc.query("/filter/cutoff") == .float(1000))
                #expect(listener.soundfit?.process.isRunning == true)
            }
            let back = ContinuousClock.now - restarted
            report("netjack2 master restart → both SoundFits connected again (jackd start and netmanager included)",
                   Double(back.components.seconds) + Double(back.components.attoseconds) / 1e18, unit: "s")
            audio = try patchedClient(master: master, listeners: listeners, probe: probeAgain)
            try expectLowpass(audio, listeners: listeners, label: " after the master restart")
            // The round trip again, filter off.
            for listener in listeners {
                expectApplied(try #require(listener.osc).set("/filter/enabled", .int(0)), "/filter/enabled", .int(0))
            }
            for latency in try roundTrip(audio, listeners: listeners) {
                report("netjack2 round trip after the master restart, \(latency.slave)", Double(latency.frames) / Double(Self.period),
                       unit: "periods (\(latency.frames) frames)")
            }
        }

        // MARK: Helpers

        /// `jack_load netmanager` on the master, unicast: it listens on the master's address.
        private func loadNetManager(_ master: TestJackServer) throws {
            try JackTools.run("jack_load", server: master.name, "-i", "-a \(Self.masterAddress)", "netmanager")
        }

        /// The master-side client of `listener`'s slave, looked up in the master's port list:
        /// the client with netjack2's `to_slave_N` ports named after the slave.
        private func waitForNetClient(of listener: Listener, on probe: TestJackClient, timeout: Duration) throws -> String {
            let deadline = ContinuousClock.now + timeout
            while true {
                let clients = Set(probe.ports(matching: ":to_slave_1$").map { String($0.split(separator: ":")[0]) })
                let matching = clients.filter { $0 == listener.slaveName || $0.hasPrefix(listener.slaveName + "-") }
                if matching.count == 1, let client = matching.first,
                   probe.ports(matching: "^\(client):from_slave_").count == 2 {
                    return client
                }
                if !listener.slave.isRunning {
                    throw IntegrationError("slave \(listener.slaveName) exited: \(listener.slave.standardError)")
                }
                if ContinuousClock.now >= deadline {
                    throw IntegrationError("no client of slave \(listener.slaveName) on the master within \(timeout): \(clients); "
                                           + "slave: \(listener.slave.standardOutput.suffix(2000))")
                }
                Thread.sleep(forTimeInterval: 0.1)  // polls a condition (with a deadline)
            }
        }

        /// Polls the slave's graph (`jack_lsp -c` in its box) until SoundFit's ports are
        /// connected to the slave's system ports again.
        private func waitForConnections(_ listener: Listener, boxes: NetJackBoxes) throws {
            let wanted = ["system:capture_1", "system:capture_2", "system:playback_1", "system:playback_2"]
            let deadline = ContinuousClock.now + .seconds(30)
            var graph = ""
            while ContinuousClock.now < deadline {
                graph = try boxes.run(in: listener.box, ["/usr/bin/jack_lsp", "-c", "soundfit"],
                                      environment: ["JACK_DEFAULT_SERVER": listener.server])
                let connected = Set(graph.split(separator: "\n").filter { $0.hasPrefix(" ") }
                    .map { $0.trimmingCharacters(in: .whitespaces) })
                if connected.isSuperset(of: wanted) { return }
                Thread.sleep(forTimeInterval: 0.1)  // polls a condition (with a deadline)
            }
            throw IntegrationError("SoundFit on \(listener.slaveName) is not connected again: \(graph)")
        }

        /// A 4-channel test client on the master, channels 2i-1, 2i through slave i:
        /// `out` → `<client>:to_slave_N` and `<client>:from_slave_N` → `in`.
        private func patchedClient(master: TestJackServer, listeners: [Listener], probe: TestJackClient) throws -> TestJackClient {
            let audio = try TestJackClient(server: master.name, name: "sfnet", channels: 2 * listeners.count)
            for (index, listener) in listeners.enumerated() {
                let client = try waitForNetClient(of: listener, on: probe, timeout: .seconds(30))
                for channel in 1...2 {
                    let ours = 2 * index + channel
                    try audio.connect("\(audio.name):out_\(ours)", "\(client):to_slave_\(channel)")
                    try audio.connect("\(client):from_slave_\(channel)", "\(audio.name):in_\(ours)")
                }
            }
            return audio
        }

        /// Plays an impulse every `spacing` frames and finds it in every channel's capture:
        /// the lag (frames) at which every impulse of a capture comes back with the very value
        /// played. Captures with a dropout are taken again (netjack2 may start with a gap).
        private func roundTrip(_ audio: TestJackClient, listeners: [Listener]) throws -> [(slave: String, frames: Int)] {
            let spacing = 4800
            let value: Float = 0.5
            var impulses = [Float](repeating: 0, count: spacing * 10)
            for start in stride(from: 0, to: impulses.count, by: spacing) { impulses[start] = value }
            var lags: [Int?] = []
            let deadline = ContinuousClock.now + .seconds(60)
            repeat {
                let captured = try audio.capture([impulses], frames: Capture.captureFrames)
                lags = captured.map { samples -> Int? in
                    // The first impulse, then every one after it in the capture, exact.
                    guard let first = samples.firstIndex(where: { $0 == value }), first < spacing else { return nil }
                    let expected = Set(stride(from: first, to: samples.count, by: spacing))
                    for (index, sample) in samples.enumerated().dropFirst(first) where (sample != 0) != expected.contains(index) || (sample != 0 && sample != value) {
                        return nil
                    }
                    return first
                }
                if lags.allSatisfy({ $0 != nil }) { break }
                print("note: impulses did not all come back exact: \(lags); capturing again")
            } while ContinuousClock.now < deadline
            #expect(lags.allSatisfy { $0 != nil }, "impulses through netjack2: \(lags)")
            var result: [(String, Int)] = []
            for (index, listener) in listeners.enumerated() {
                let pair = [lags[2 * index], lags[2 * index + 1]]
                #expect(pair[0] == pair[1], "\(listener.slaveName): channels differ: \(pair)")
                if let frames = pair[0] {
                    // At least the slave's own latency (capture + playback, as its ports report).
                    #expect(frames >= Self.period, "\(listener.slaveName): \(frames) frames")
                    result.append((listener.slaveName, frames))
                }
            }
            return result
        }

        /// 250 Hz + 4 kHz through each slave's SoundFit (lowpass 1 kHz) on the cookbook within
        /// 0.1 dB, in every clean window (one with no dropout: the two tones fit it to −60 dB).
        private func expectLowpass(_ audio: TestJackClient, listeners: [Listener], label: String) throws {
            let mix = zip(Capture.tone(250), Capture.tone(4000)).map { $0 + $1 }
            let reference = CookbookBiquad(kind: .lpf, f0: 1000, q: 0.7071, dbGain: 0, fs: Capture.sampleRate)
            let expected = [250.0, 4000.0].map { reference.magnitudeDecibels(atFrequency: $0, fs: Capture.sampleRate) }
            var windows: [[[Double]]] = []
            let deadline = ContinuousClock.now + .seconds(60)
            repeat {
                let captured = try audio.capture([mix], frames: Capture.captureFrames)
                windows = captured.map { cleanWindowLevels($0) }
                if windows.allSatisfy({ $0.count >= 3 }) { break }
                print("note: too few clean windows \(windows.map(\.count)); capturing again")
            } while ContinuousClock.now < deadline
            for (index, listener) in listeners.enumerated() {
                for channel in 0..<2 {
                    let levels = windows[2 * index + channel]
                    #expect(levels.count >= 3, "\(listener.slaveName) ch\(channel + 1): \(levels.count) clean windows")
                    for (position, frequency) in [250.0, 4000.0].enumerated() {
                        let measured = levels.map { $0[position] }
                        guard let worst = measured.max(by: { abs($0 - expected[position]) < abs($1 - expected[position]) })
                        else { continue }
                        report("lowpass 1 kHz via \(listener.slaveName) ch\(channel + 1)\(label): \(Int(frequency)) Hz (cookbook "
                               + String(format: "%.4f", expected[position]) + ")", worst)
                        #expect(abs(worst - expected[position]) <= 0.1,
                                "\(listener.slaveName) ch\(channel + 1)\(label): \(frequency) Hz at \(measured) dB, cookbook \(expected[position])")
                    }
                }
            }
        }

        /// Levels (dB re −20 dBFS) of 250 Hz and 4 kHz in each 0.1 s window after the first
        /// 0.25 s that the two tones explain to −60 dB (a dropout or a jump leaves more).
        private func cleanWindowLevels(_ samples: [Float]) -> [[Double]] {
            let length = 4800
            var result: [[Double]] = []
            for start in stride(from: Capture.discardFrames, through: samples.count - length, by: length) {
                let window = Array(samples[start..<(start + length)])
                let fits = [250.0, 4000.0].map { Meter.toneComponents(window, frequency: $0, sampleRate: Capture.sampleRate) }
                let model = (0..<length).map { n in
                    zip([250.0, 4000.0], fits).reduce(0.0) { sum, tone in
                        sum + tone.1.amplitude * cos(2 * Double.pi * tone.0 * Double(n) / Capture.sampleRate + tone.1.phase)
                    }
                }
                guard Meter.residualDecibels(window, reference: model) <= -60 else { continue }
                result.append(fits.map { Meter.decibels($0.amplitude / Capture.minus20dBFS) })
            }
            return result
        }

        /// The HTTP port of the ready line's `http=http://HOST:PORT/…`.
        private func httpPort(of soundfit: SoundFitProcess) throws -> UInt16 {
            let line = soundfit.process.standardOutput.split(separator: "\n").first { $0.hasPrefix("soundfit ready ") } ?? ""
            guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("http=http://") }),
                  let port = UInt16(field.dropFirst("http=http://".count).split(separator: ":").last?.prefix { $0.isNumber } ?? "")
            else { throw IntegrationError("no HTTP port in the ready line: \(line)") }
            return port
        }
    }
}
