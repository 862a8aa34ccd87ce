import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Applied means persisted: `/state … applied` is sent only once the change is in
    /// the state journal, so `kill -9` loses nothing reported applied; a state that cannot be
    /// written is reported (`/error … "not persisted: …"`, `/status persisted 0`) and persistence
    /// resumes by itself.
    @Suite("Applied means persisted") struct AppliedMeansPersisted {
        /// The parameter the bursts move, through values that only grow across all runs, so
        /// "not older than the last reported applied" is "at least as large".
        static let address = "/filter/cutoff"

        @Test("20 × kill -9 during 1 000 sets/s: the restored value is never older than the last reported applied")
        func twentyKillsDuringABurst() throws {
            try Rig.run(.server(directory: "sf-applied")) { rig in
                var instance = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1)
                defer { instance.stop() }
                var step = 0
                var totalApplied = 0, totalSent = 0
                var notYetApplied: [Int] = []
                for run in 1...20 {
                    let osc = instance.osc
                    osc.drain()
                    var lastApplied: Double?
                    func collect() {
                        for message in osc.collect(for: .zero)
                        where message.address == "/state" && message.string(0) == Self.address && message.string(1) == "applied" {
                            if let value = message.number(2) {
                                lastApplied = max(lastApplied ?? value, value)
                                totalApplied += 1
                            }
                        }
                    }
                    // 1 000 sets/s for 0.3…0.49 s (a different phase of the audio cycle each run).
                    let duration = Duration.milliseconds(300 + run * 10)
                    let start = ContinuousClock.now
                    var sent = 0
                    while ContinuousClock.now - start < duration {
                        let due = start + .microseconds(Int64(sent) * 1000)
                        if ContinuousClock.now < due {
                            collect()
                            continue
                        }
                        osc.send(Self.address, .float(Float(100 + step)))
                        step += 1
                        sent += 1
                    }
                    collect()
                    instance.kill9()
                    totalSent += sent
                    let applied = try #require(lastApplied, "run \(run): no set was reported applied in \(duration)")
                    notYetApplied.append(100 + step - 1 - Int(applied))

                    instance = try Self.restart(server: rig.server, stateDirectory: rig.directory)
                    guard case .float(let restored) = try instance.osc.query(Self.address) else {
                        Issue.record("run \(run): \(Self.address) is not a float")
                        continue
                    }
                    #expect(Double(restored) >= applied,
                            "run \(run): restored \(restored), but \(applied) was reported applied before the kill -9")
                    #expect(Double(restored) <= Double(100 + step - 1), "run \(run): restored \(restored), more than was ever sent")
                }
                report("kill -9 runs: sets sent", Double(totalSent), unit: "")
                report("kill -9 runs: applied reports received", Double(totalApplied), unit: "")
                report("kill -9 runs: sets sent after the last applied report, median",
                       Double(notYetApplied.sorted()[notYetApplied.count / 2]), unit: "")
            }
        }

        /// A `soundfit` on `stateDirectory` after a `kill -9`. jackd notices the killed client on
        /// its own schedule (no event tells when); a start that finds it still there fails at
        /// once (exit 2, a JACK host error), so up to 5 starts are tried, 200 ms apart.
        static func restart(server: TestJackServer, stateDirectory: URL) throws -> SoundFitInstance {
            var attempt = 1
            while true {
                do {
                    return try SoundFitInstance(server: server, stateDirectory: stateDirectory, channels: 1)
                } catch {
                    guard attempt < 5 else { throw error }
                    attempt += 1
                    Thread.sleep(forTimeInterval: 0.2)  // backoff before a retry
                }
            }
        }

        @Test("a full state disk: applied but not persisted, /status persisted 0 and the page's banner, then back to 1 by itself",
              .enabled(if: getuid() == 0, "mounts a tmpfs (needs root)"))
        func fullStateDisk() throws {
            try Rig.run(.server(directory: "sf-full")) { rig in
                // A small disk of its own, so it can be filled without filling anything else (as root,
                // permissions would not stop the writes).
                guard mount("tmpfs", rig.directory.path, "tmpfs", 0, "size=512k") == 0 else {
                    throw IntegrationError("cannot mount a tmpfs on \(rig.directory.path): \(String(cString: strerror(errno)))")
                }
                defer { umount2(rig.directory.path, Int32(MNT_DETACH)) }
                let instance = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1)
                defer { instance.stop() }
                let osc = instance.osc
                let port = try #require(instance.ready.httpPort, "the ready line names no HTTP port")
                let page = try BrowserDriver(url: "http://127.0.0.1:\(port)/ui/")
                defer { page.quit() }
                expectApplied(try osc.set(Self.address, .float(500)), Self.address, .float(500))
                #expect(waitUntilSaved(rig.directory, Self.address, 500) != nil)
                #expect(try osc.status()["persisted"] == .int(1))
                _ = try page.call("wait_persistence", ["persisted": true])

                let filler = rig.directory.appendingPathComponent("filler")
                let written = try fill(filler)
                report("full disk: filler bytes", Double(written), unit: "B")
                osc.drain()
                osc.send(Self.address, .float(600), .int(7))
                let reports = try osc.waitForTerminalState(Self.address)
                #expect(reports.last?.string(1) == "applied", "\(reports)")
                let error = try osc.waitFor("not persisted", timeout: .seconds(5)) { $0.address == "/error" }.match
                #expect(error.string(0) == Self.address, "\(error)")
                #expect(error.string(1)?.hasPrefix("not persisted: ") == true, "\(error)")
                #expect(error.string(1)?.contains("No space left on device") == true, "\(error)")
                #expect(try osc.status()["persisted"] == .int(0))
                #expect(try osc.query(Self.address) == .float(600), "the change did not apply")
                let banner = try #require(try page.call("wait_persistence", ["persisted": false]) as? [String: Any])
                #expect((banner["text"] as? String)?.hasPrefix("Not persisted") == true, "\(banner)")
                _ = try? page.screenshot("not-persisted")

                // The disk recovers: without another change, persistence resumes and the value is saved.
                try FileManager.default.removeItem(at: filler)
                _ = try osc.waitForStatus(timeout: .seconds(10)) { $0["persisted"] == .int(1) }
                #expect(waitUntilSaved(rig.directory, Self.address, 600) != nil)
                _ = try page.call("wait_persistence", ["persisted": true])
                #expect(instance.log.contains("No space left on device"), "the failure was not logged")
            }
        }

        /// Writes zeros into `url` until the disk is full; returns how many bytes fit.
        private func fill(_ url: URL) throws -> Int {
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { throw IntegrationError("cannot create \(url.path)") }
            defer { close(descriptor) }
            let chunk = [UInt8](repeating: 0, count: 4096)
            var total = 0
            while true {
                let count = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if count <= 0 {
                    guard count < 0, errno == ENOSPC else { throw IntegrationError("filling \(url.path): \(String(cString: strerror(errno)))") }
                    return total
                }
                total += count
            }
        }
    }
}
