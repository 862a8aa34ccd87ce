import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// No web page but SoundFit's own can drive it, no rebound DNS
    /// name can read it, and an exposed port needs its token (`WebAccess`). Raw requests over
    /// TCP to the real binary, a hostile page in headless Chromium, effects checked over UDP OSC.
    @Suite("Web access: Host, Origin, token") struct WebAccessTests {
        /// `/output/gain ,f value`, as OSC bytes.
        static func gainPacket(_ value: Float) -> [UInt8] { OSCWire.encode(OSCTestMessage("/output/gain", [.float(value)])) }

        /// Waits until a UDP query of `/output/gain` reads `value` (a WebSocket's change is applied asynchronously).
        static func waitForGain(_ osc: OSCTestClient, _ value: Double, timeout: Duration = .seconds(10)) throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if try osc.query("/output/gain").number == value { return true }
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline): a WebSocket's change, seen over UDP
            }
            return false
        }

        /// Sends a WebSocket handshake with `headers` and returns the status (101, 403, …) and the
        /// connection, the upgrade's answer read.
        static func upgrade(_ port: UInt16, target: String = "/", host: String?, _ headers: [(String, String)] = [],
                            address: UInt32 = 0x7F00_0001) throws -> (status: Int, body: String, connection: RawHTTPConnection) {
            let connection = try RawHTTPConnection(port: port, host: address)
            connection.send(RawHTTPConnection.request(target, host: host, headers: RawHTTPConnection.upgradeHeaders + headers))
            guard let response = connection.readResponse() else {
                throw IntegrationError("no answer to a WebSocket handshake with \(headers): \(connection.received.count) bytes")
            }
            return (response.status, String(decoding: response.body, as: UTF8.self), connection)
        }

        @Test("A WebSocket from another origin is refused 403 with a JSON reason and changes nothing; the page's own origin and a non-browser client (no Origin) are upgraded; refusals are logged rate-limited")
        func forgedOrigin() throws {
            try Rig.run(.process(channels: 1, arguments: ["--http-allow-origin", "http://studio.lan:8080"])) { rig in
                let port = try #require(rig.ready.httpPort)
                let host = "127.0.0.1:\(port)"
                let before = try rig.osc.query("/output/gain").number

                // The attack of the issue: the handshake with a foreign Origin, then /output/gain 12 anyway.
                let start = ContinuousClock.now
                let forged = try Self.upgrade(port, host: host, [("Origin", "http://evil.example")])
                #expect(forged.status == 403, "\(forged)")
                let reason = try JSONSerialization.jsonObject(with: Data(forged.body.utf8)) as? [String: Any]
                #expect((reason?["error"] as? String)?.contains("origin 'http://evil.example'") == true, "\(forged.body)")
                forged.connection.send(RawHTTPConnection.frame(opcode: 2, payload: Self.gainPacket(12)))
                #expect(forged.connection.waitForClose(timeout: .seconds(5)), "the refused connection stayed open")
                for origin in ["null", "http://127.0.0.1:\(port &+ 1)", "https://127.0.0.1:\(port)", "http://evil.example:\(port)",
                               "http://127.0.0.1.evil.example:\(port)"] {
                    let refused = try Self.upgrade(port, host: host, [("Origin", origin)])
                    #expect(refused.status == 403, "Origin \(origin): \(refused.status) \(refused.body)")
                }
                // A state-changing request with a foreign Origin is refused before its route (405 otherwise).
                let post = try RawHTTPConnection(port: port)
                post.send(RawHTTPConnection.request("POST", "/output/gain", host: host, headers: [("Origin", "http://evil.example")],
                                                    body: Array("12".utf8)))
                #expect(post.readResponse()?.status == 403)
                #expect(try rig.osc.query("/output/gain").number == before, "a refused client changed /output/gain")

                // The page's own origin (any loopback name with this port), an allowed origin, and no Origin at all.
                for (origin, gain) in [("http://127.0.0.1:\(port)", -3.0), ("http://localhost:\(port)", -4.0),
                                       ("http://studio.lan:8080", -5.0), (nil, -6.0)] as [(String?, Double)] {
                    let own = try Self.upgrade(port, host: host, origin.map { [("Origin", $0)] } ?? [])
                    #expect(own.status == 101, "Origin \(origin ?? "none"): \(own.status) \(own.body)")
                    own.connection.send(RawHTTPConnection.frame(opcode: 2, payload: Self.gainPacket(Float(gain))))
                    #expect(try Self.waitForGain(rig.osc, gain), "Origin \(origin ?? "none") could not set /output/gain \(gain)")
                }

                // A flood of forged handshakes: each refused, the log bounded (5 lines per 10 s).
                for _ in 0..<50 {
                    #expect(try Self.upgrade(port, host: host, [("Origin", "http://evil.example")]).status == 403)
                }
                let elapsed = ContinuousClock.now - start
                let logged = rig.soundfit.process.standardError.components(separatedBy: "HTTP 403").count - 1
                report("log lines for the test's 57 refusals", Double(logged), unit: "lines")
                #expect(logged >= 1, "no refusal was logged")
                // (Refusals spanning n windows of 10 s may fill each, and one summary line each.)
                #expect(logged <= 6 * (Int(elapsed.components.seconds) / 10 + 2), "\(logged) log lines for 57 refusals in \(elapsed)")
                try rig.osc.ping()
            }
        }

        @Test("A forged Host (DNS rebinding) is refused 403 on GET /, HOST_INFO, /response, /ui and the upgrade; loopback names, [::1] and --http-allow-host are answered")
        func forgedHost() throws {
            let rig = try Rig.start(.process(channels: 1, arguments: ["--http-allow-host", "soundfit.local,studio.lan", "--http-allow-host", "mixer"]))
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort)
            for target in ["/", "/?HOST_INFO", "/response", "/ui/", "/output/gain?VALUE"] {
                for host in ["evil.example:\(port)", "evil.example", "127.0.0.1.evil.example:\(port)", "soundfit.local.evil.example"] {
                    let connection = try RawHTTPConnection(port: port)
                    connection.send(RawHTTPConnection.request(target, host: host))
                    let response = connection.readResponse()
                    #expect(response?.status == 403, "GET \(target), Host \(host): \(String(describing: response?.status))")
                    #expect(response.map { String(decoding: $0.body, as: UTF8.self).contains("DNS rebinding") } == true)
                }
            }
            let noHost = try RawHTTPConnection(port: port)
            noHost.send(RawHTTPConnection.request("/", host: nil))
            #expect(noHost.readResponse()?.status == 403, "a request without Host")
            let rebound = try Self.upgrade(port, host: "evil.example:\(port)", [("Origin", "http://evil.example:\(port)")])
            #expect(rebound.status == 403, "\(rebound)")
            let reboundWithoutOrigin = try Self.upgrade(port, host: "evil.example:\(port)")
            #expect(reboundWithoutOrigin.status == 403, "\(reboundWithoutOrigin)")

            for host in ["127.0.0.1:\(port)", "127.0.0.1", "localhost:\(port)", "LOCALHOST", "127.1.2.3:\(port)", "[::1]:\(port)",
                         "soundfit.local:\(port)", "studio.lan", "mixer:\(port)"] {
                let connection = try RawHTTPConnection(port: port)
                connection.send(RawHTTPConnection.request("/?HOST_INFO", host: host))
                let response = connection.readResponse()
                #expect(response?.status == 200, "Host \(host): \(String(describing: response?.status))")
            }
            let allowed = try Self.upgrade(port, host: "soundfit.local:\(port)", [("Origin", "http://soundfit.local:\(port)")])
            #expect(allowed.status == 101, "\(allowed)")
        }

        @Test("A page from another origin in Chromium cannot open a WebSocket to SoundFit nor change anything")
        func hostilePageInBrowser() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try #require(rig.ready.httpPort)
                let before = try rig.osc.query("/output/gain").number
                // The hostile page, served by a second HTTP server on another port of this host.
                let folder = try UniqueName.temporaryDirectory("soundfit-hostile")
                defer { try? FileManager.default.removeItem(at: folder) }
                let packet = Self.gainPacket(12).map(String.init).joined(separator: ",")
                // (`data-ready` and a `.parameter` element: what the driver's open_page waits for.)
                let page = """
                    <!doctype html><html><body data-ready="true"><div class="parameter">hostile page</div><script>
                    for (const [key, url] of [["local", "ws://127.0.0.1:\(port)/"], ["named", "ws://localhost:\(port)/"]]) {
                      const socket = new WebSocket(url);
                      socket.binaryType = "arraybuffer";
                      socket.onopen = () => { socket.send(new Uint8Array([\(packet)])); document.body.dataset[key] = "open"; };
                      socket.onclose = (event) => { document.body.dataset[key] ||= "closed " + event.code; };
                    }
                    fetch("http://127.0.0.1:\(port)/output/gain", {method: "POST", mode: "no-cors", body: "12"})
                      .then(() => { document.body.dataset.post = "sent"; }, () => { document.body.dataset.post = "failed"; });
                    </script></body></html>
                    """
                try page.write(to: folder.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
                let server = try ChildProcess(label: "hostile page server", executable: "/usr/bin/python3",
                                              arguments: ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path])
                defer { server.stop() }
                let hostilePort = server.waitForOutput(timeout: .seconds(15)) { output -> Int? in
                    output.range(of: "port ").flatMap { Int(output[$0.upperBound...].prefix { $0.isNumber }) }
                }
                let served = try #require(hostilePort, "python3 -m http.server printed no port: \(server.standardError)")

                let browser = try BrowserDriver(url: "http://127.0.0.1:\(served)/index.html")
                defer { browser.quit() }
                for key in ["local", "named"] {
                    let outcome = try #require(try browser.call("wait_dataset", ["key": key]) as? String)
                    #expect(outcome.hasPrefix("closed"), "the hostile page's WebSocket to \(key): \(outcome)")
                }
                _ = try browser.call("wait_dataset", ["key": "post"])
                #expect(try rig.osc.query("/output/gain").number == before, "the hostile page changed /output/gain")
                let log = rig.soundfit.process.standardError
                #expect(log.contains("from the origin 'http://127.0.0.1:\(served)' is refused"), "\(log.suffix(2000))")
            }
        }

        @Test("--http-token on loopback: the ready line carries it, an upgrade without it is refused, with it upgraded")
        func tokenOnLoopback() throws {
            try Rig.run(.process(channels: 1, arguments: ["--http-token", "local-secret_1"])) { rig in
                let port = try #require(rig.ready.httpPort)
                #expect(rig.ready.fields["http"] == "http://127.0.0.1:\(port)/?token=local-secret_1", "\(rig.ready.fields)")
                let host = "127.0.0.1:\(port)"
                let refused = try Self.upgrade(port, host: host, [("Origin", "http://127.0.0.1:\(port)")])
                #expect(refused.status == 403 && refused.body.contains("token"), "\(refused.status) \(refused.body)")
                let upgraded = try Self.upgrade(port, target: "/?token=local-secret_1", host: host, [("Origin", "http://127.0.0.1:\(port)")])
                #expect(upgraded.status == 101, "\(upgraded.status) \(upgraded.body)")
                #expect(try PlainHTTP.get(port: port, "/?HOST_INFO").status == 200, "a read needs no token")
            }
        }

        @Test("Bad --http-token, --http-allow-host and --http-allow-origin values: a message naming the flag and exit 64")
        func badFlags() throws {
            for (arguments, flag) in [(["--http-token", "a b"], "--http-token"), (["--http-token", ""], "--http-token"),
                                      (["--http-allow-host", "evil/example"], "--http-allow-host"),
                                      (["--http-allow-origin", "evil.example"], "--http-allow-origin")] {
                let soundfit = try SoundFitProcess(arguments: ["--no-start-server"] + arguments)
                defer { soundfit.stop() }
                #expect(soundfit.process.waitForExit(timeout: .seconds(30)), "\(arguments) did not exit")
                #expect(soundfit.process.termination?.status == 64, "\(arguments): \(String(describing: soundfit.process.termination))")
                #expect(soundfit.process.standardError.contains(flag), "\(arguments): \(soundfit.process.standardError)")
            }
        }

        @Test("An exposed port (--osc-host 0.0.0.0) prints a token; upgrades and state-changing requests need it (query or Bearer); reads do not; the page forwards it to its WebSocket")
        func tokenWhenExposed() throws {
            let rig = try Rig.start(.launched(channels: 1, arguments: ["--osc-host", "0.0.0.0"]))
            defer { rig.stop() }
            let oscPort = try rig.soundfit.oscEndpoint().port
            let http = rig.soundfit.process.waitForOutput(timeout: .seconds(30)) { output -> String? in
                output.split(separator: " ").first { $0.hasPrefix("http=") }.map { String($0.dropFirst("http=".count)) }
            }
            let url = try #require(http, "\(rig.soundfit.process.standardOutput)")
            let match = try #require(url.wholeMatch(of: /http:\/\/0\.0\.0\.0:(\d+)\/\?token=([0-9a-f]{32})\n?/), "ready line http=\(url)")
            let port = try #require(UInt16(match.1)), token = String(match.2)
            let osc = try OSCTestClient.inSession(port: oscPort)
            let host = "127.0.0.1:\(port)"
            let initial = try osc.query("/output/gain").number

            for (headers, target) in [([], "/"), ([], "/?token=" + String(repeating: "0", count: 32)),
                                      ([("Authorization", "Bearer nope")], "/"), ([("Origin", "http://127.0.0.1:\(port)")], "/")]
                as [([(String, String)], String)] {
                let refused = try Self.upgrade(port, target: target, host: host, headers)
                #expect(refused.status == 403 && refused.body.contains("token"), "\(headers) \(target): \(refused.status) \(refused.body)")
                refused.connection.send(RawHTTPConnection.frame(opcode: 2, payload: Self.gainPacket(-20)))
            }
            let post = try RawHTTPConnection(port: port)
            post.send(RawHTTPConnection.request("POST", "/output/gain", host: host, body: Array("12".utf8)))
            #expect(post.readResponse()?.status == 403, "a POST without the token")
            let postWithToken = try RawHTTPConnection(port: port)
            postWithToken.send(RawHTTPConnection.request("POST", "/output/gain?token=\(token)", host: host, body: Array("12".utf8)))
            #expect(postWithToken.readResponse()?.status == 405, "a POST with the token passes the check (and no route takes POST)")
            #expect(try PlainHTTP.get(port: port, "/output/gain?VALUE").status == 200, "a read needs no token")

            #expect(try osc.query("/output/gain").number == initial, "a refused client changed /output/gain")
            let byQuery = try Self.upgrade(port, target: "/?token=\(token)", host: host, [("Origin", "http://127.0.0.1:\(port)")])
            #expect(byQuery.status == 101, "\(byQuery)")
            byQuery.connection.send(RawHTTPConnection.frame(opcode: 2, payload: Self.gainPacket(-6)))
            #expect(try Self.waitForGain(osc, -6))
            let byBearer = try Self.upgrade(port, host: host, [("Authorization", "Bearer \(token)")])
            #expect(byBearer.status == 101, "\(byBearer)")

            // The page, opened with the token of the ready line, gets its WebSocket: a UDP change shows.
            let page = try BrowserDriver(url: "http://127.0.0.1:\(port)/ui/?token=\(token)")
            defer { page.quit() }
            expectApplied(try osc.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))
            _ = try page.call("wait_value", ["path": "/filter/cutoff", "value": 2500, "tolerance": 0.5])
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
            let screenshot = try page.screenshot("web-token")
            print("screenshot: \(screenshot)")
        }
    }
}
