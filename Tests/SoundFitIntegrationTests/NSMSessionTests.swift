import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// SoundFit in an NSM session: the real binary started with `NSM_URL` pointing at a
    /// protocol-exact NSM server in the test (Debian 12 ships none), on a real jackd.
    @Suite("NSM session") struct NSMSession {
        /// Starts `soundfit run` as an NSM server would (only `NSM_URL` tells it about the session).
        func launch(_ nsm: TestNSMServer, server: TestJackServer, arguments: [String] = [],
                    environment: [String: String] = [:]) throws -> ChildProcess {
            try NSMRig.launch(nsm, server: server, arguments: arguments, environment: environment)
        }

        /// Answers the announce and opens `path` as `clientID`; returns the ready line.
        func open(_ nsm: TestNSMServer, _ process: ChildProcess, path: URL, clientID: String) throws -> ReadyLine {
            try nsm.send("/reply", .string("/nsm/server/announce"), .string("Howdy, what took you so long?"),
                         .string("test-nsm"), .string(":server-control:"))
            try nsm.send("/nsm/client/open", .string(path.path), .string("SoundFit"), .string(clientID))
            let reply = try nsm.waitFor("/reply to open") { $0.address == "/reply" || $0.address == "/error" }.match
            #expect(reply.address == "/reply" && reply.string(0) == "/nsm/client/open" && reply.arguments.count == 2,
                    "\(reply); stderr: \(process.standardError)")
            guard let ready = process.waitForOutput(timeout: .seconds(30), ReadyLine.find(in:)) else {
                throw IntegrationError("no ready line after open; stderr: \(process.standardError)")
            }
            return ready
        }

        @Test("Announce, open a new path as the JACK client id, dirty, save, clean, restart from the saved path")
        func openSaveRestart() throws {
            let rig = try Rig.start(.nsm(directory: "nsm-session"))
            defer { rig.stop() }
            let path = rig.root.appendingPathComponent("SoundFit.nTEST1")
            let clientID = "SoundFit.nTEST1"

            #expect(rig.announce.arguments.map(\.description).count == 6, "\(rig.announce)")
            #expect(rig.announce.string(0) == "SoundFit")
            #expect(rig.announce.string(1) == ":switch:dirty:optional-gui:")
            #expect(rig.announce.string(2).map { URL(fileURLWithPath: $0).lastPathComponent } == "soundfit", "\(rig.announce)")
            #expect(rig.announce.arguments[3] == .int(1) && rig.announce.arguments[4] == .int(2), "\(rig.announce)")
            #expect(rig.announce.arguments[5] == .int(Int32(rig.process.pid)), "\(rig.announce) pid \(rig.process.pid)")
            // Nothing joins JACK before the session opened.
            #expect(try !JackTools.run("jack_lsp", server: rig.server.name).contains("\(clientID):"))

            let ready = try open(rig.nsm, rig.process, path: path, clientID: clientID)
            #expect(ready.fields["client"] == clientID)
            let ports = try JackTools.run("jack_lsp", server: rig.server.name)
            #expect(ports.contains("\(clientID):input_1") && ports.contains("\(clientID):output_2"), "\(ports)")

            let osc = try OSCTestClient.inSession(port: ready.oscPort)
            // Opening is clean: nothing reported dirty yet.
            // Listening: what SoundFit sends the NSM server is not ordered by any request of ours,
            // and it reports dirty only after the values rested (a debounce in time): no event.
            #expect(!rig.nsm.collect(for: .milliseconds(500)).contains { $0.address == "/nsm/client/is_dirty" })

            expectApplied(try osc.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))
            _ = try rig.nsm.waitFor("/nsm/client/is_dirty") { $0.address == "/nsm/client/is_dirty" }

            // A forged save from another port of this host is ignored: no reply, no save.
            let forger = try OSCTestClient(port: UInt16(bigEndian: try #require(rig.nsm.client).sin_port))
            forger.send("/nsm/client/save")
            // It would be answered before the probe the server sends after it.
            #expect(!(try rig.nsm.receivedBeforeProbe()).contains { $0.address == "/reply" })

            try rig.nsm.send("/nsm/client/save")
            let saved = try rig.nsm.waitFor("/reply to save") { $0.address == "/reply" || $0.address == "/error" }.match
            #expect(saved.address == "/reply" && saved.string(0) == "/nsm/client/save", "\(saved)")
            _ = try rig.nsm.waitFor("/nsm/client/is_clean") { $0.address == "/nsm/client/is_clean" }
            #expect(savedNumber(path, "/filter/cutoff") == 2500, "\(String(describing: savedParameters(path)))")
            #expect(FileManager.default.fileExists(atPath: path.appendingPathComponent("document.json").path))

            // A change back to the saved value is clean again without a save.
            expectApplied(try osc.set("/filter/cutoff", .float(1200)), "/filter/cutoff", .float(1200))
            _ = try rig.nsm.waitFor("/nsm/client/is_dirty") { $0.address == "/nsm/client/is_dirty" }
            expectApplied(try osc.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))
            _ = try rig.nsm.waitFor("/nsm/client/is_clean") { $0.address == "/nsm/client/is_clean" }

            // :switch: — an open while running moves SoundFit to the new path and client id in
            // the same process: the old JACK client is gone, the new one has the defaults.
            let otherPath = rig.root.appendingPathComponent("SoundFit.nTEST2")
            let readyLines = rig.process.standardOutput.components(separatedBy: "soundfit ready").count
            try rig.nsm.send("/nsm/client/open", .string(otherPath.path), .string("SoundFit"), .string("SoundFit.nTEST2"))
            let switched = try rig.nsm.waitFor("/reply to the switch") { $0.address == "/reply" || $0.address == "/error" }.match
            #expect(switched.address == "/reply" && switched.string(0) == "/nsm/client/open", "\(switched); \(rig.process.standardError)")
            let secondReady = rig.process.waitForOutput(timeout: .seconds(30)) { output -> ReadyLine? in
                let parts = output.components(separatedBy: "soundfit ready")
                return parts.count > readyLines ? ReadyLine.find(in: "soundfit ready" + parts[readyLines]) : nil
            }
            let switchedReady = try #require(secondReady, "no second ready line; \(rig.process.standardError)")
            #expect(switchedReady.fields["client"] == "SoundFit.nTEST2")
            #expect(rig.process.isRunning)
            let switchedPorts = try JackTools.run("jack_lsp", server: rig.server.name)
            #expect(switchedPorts.contains("SoundFit.nTEST2:input_1") && !switchedPorts.contains("\(clientID):"), "\(switchedPorts)")
            let oscSwitched = try OSCTestClient.inSession(port: switchedReady.oscPort)
            #expect(try oscSwitched.query("/filter/cutoff").number == 1000)
            #expect(FileManager.default.fileExists(atPath: otherPath.appendingPathComponent("soundfit.lock").path))
            // And back: the first path comes with its saved value (its lock was released).
            try rig.nsm.send("/nsm/client/open", .string(path.path), .string("SoundFit"), .string(clientID))
            let back = try rig.nsm.waitFor("/reply to the switch back") { $0.address == "/reply" || $0.address == "/error" }.match
            #expect(back.address == "/reply" && back.string(0) == "/nsm/client/open", "\(back); \(rig.process.standardError)")
            let thirdReady = rig.process.waitForOutput(timeout: .seconds(30)) { output -> ReadyLine? in
                let parts = output.components(separatedBy: "soundfit ready")
                return parts.count > readyLines + 1 ? ReadyLine.find(in: "soundfit ready" + parts[readyLines + 1]) : nil
            }
            let backReady = try #require(thirdReady, "no third ready line; \(rig.process.standardError)")
            #expect(backReady.fields["client"] == clientID)
            let oscBack = try OSCTestClient.inSession(port: backReady.oscPort)
            #expect(try oscBack.query("/filter/cutoff").number == 2500)

            // The session manager ends the client with SIGTERM and starts it again on the same path.
            rig.process.stop()
            let nsm2 = try TestNSMServer()
            let second = try launch(nsm2, server: rig.server)
            defer { second.stop() }
            _ = try nsm2.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }
            let again = try open(nsm2, second, path: path, clientID: clientID)
            let osc2 = try OSCTestClient.inSession(port: again.oscPort)
            #expect(try osc2.query("/filter/cutoff").number == 2500)
        }

        @Test("The optional GUI is the web surface: initially hidden, show opens its page with xdg-open, hide reports it hidden; without the HTTP port none is announced")
        func optionalGUI() throws {
            try Rig.run(.server(directory: "nsm-gui")) { rig in
                // The desktop's browser launcher, which CI has none of: this one writes down the URL
                // it was asked to open; the test then loads that URL itself.
                let bin = rig.directory.appendingPathComponent("bin")
                try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
                let opened = rig.directory.appendingPathComponent("opened.txt")
                let opener = bin.appendingPathComponent("xdg-open")
                try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(opened.path)'\n".write(to: opener, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
                let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")

                let nsm = try TestNSMServer()
                let process = try launch(nsm, server: rig.server, environment: ["PATH": "\(bin.path):\(path)"])
                defer { process.stop() }
                let announce = try nsm.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }.match
                #expect(announce.string(1) == ":switch:dirty:optional-gui:", "\(announce)")
                let ready = try open(nsm, process, path: rig.directory.appendingPathComponent("SoundFit.nGUI"), clientID: "SoundFit.nGUI")
                _ = try nsm.waitFor("initial /nsm/client/gui_is_hidden") { $0.address == "/nsm/client/gui_is_hidden" }

                try nsm.send("/nsm/client/show_optional_gui")
                _ = try nsm.waitFor("/nsm/client/gui_is_shown") { $0.address == "/nsm/client/gui_is_shown" }
                let httpPort = try #require(ready.httpPort, "no http port in \(ready.fields)")
                var url = ""
                for _ in 0..<50 where url.isEmpty {
                    url = (try? String(contentsOf: opened, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                    if url.isEmpty { Thread.sleep(forTimeInterval: 0.1) }  // polls a condition (with a deadline)
                }
                #expect(url == "http://127.0.0.1:\(httpPort)/ui/", "xdg-open was asked for '\(url)'")
                let page = try PlainHTTP.get(port: httpPort, "/ui/")
                #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("<html"), "GET /ui/: \(page.status)")

                try nsm.send("/nsm/client/hide_optional_gui")
                _ = try nsm.waitFor("/nsm/client/gui_is_hidden after hide") { $0.address == "/nsm/client/gui_is_hidden" }
                process.stop()

                // No web page to show: the capability is not announced.
                let nsm2 = try TestNSMServer()
                let plain = try launch(nsm2, server: rig.server, arguments: ["--no-http"])
                defer { plain.stop() }
                let plainAnnounce = try nsm2.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }.match
                #expect(plainAnnounce.string(1) == ":switch:dirty:", "\(plainAnnounce)")
            }
        }

        @Test("No session manager answers: a clear message and exit 1 after the bounded wait")
        func noAnswer() throws {
            try Rig.run(.server()) { rig in
                let silent = try TestNSMServer()
                let process = try launch(silent, server: rig.server, arguments: ["--nsm-open-timeout", "1"])
                defer { process.stop() }
                _ = try silent.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }
                #expect(process.waitForExit(timeout: .seconds(15)))
                #expect(process.termination?.status == 1 && process.termination?.bySignal == false, "\(String(describing: process.termination))")
                #expect(process.standardError.contains("did not send /nsm/client/open within 1 s"), "\(process.standardError)")
                #expect(try !JackTools.run("jack_lsp", server: rig.server.name).contains("soundfit:"))
            }
        }

        @Test("The session manager refuses the announce: its reason and exit 1")
        func refusedAnnounce() throws {
            try Rig.run(.nsm()) { rig in
                try rig.nsm.send("/error", .string("/nsm/server/announce"), .int(-2), .string("incompatible API version"))
                #expect(rig.process.waitForExit(timeout: .seconds(15)))
                #expect(rig.process.termination?.status == 1 && rig.process.termination?.bySignal == false)
                #expect(rig.process.standardError.contains("incompatible API version"), "\(rig.process.standardError)")
            }
        }
    }
}

/// The protocol's fixed names, spelled out in the test (not taken from SoundFit).
enum NSMTestProtocol {
    static let environmentVariable = "NSM_URL"
}
