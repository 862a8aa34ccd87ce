import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Several instances as docs/troubleshooting.md says (their own `--name`,
    /// `--osc-port` and `--state-dir`, nothing else: the HTTP port follows the OSC port), and the
    /// page's URLs without their closing slash redirected.
    @Suite("Several instances, page URLs") struct SeveralInstancesTests {
        /// A base port `p` with UDP `p`, `p + 2`, `p + 4` and TCP `p` … `p + 5` free on
        /// 127.0.0.1 now (three instances' OSC over UDP and TCP, and their HTTP ports above).
        static func freePortRange() throws -> Int {
            func bindable(_ port: Int, _ type: Int32) -> Bool {
                let descriptor = socket(AF_INET, type, 0)
                guard descriptor >= 0 else { return false }
                defer { Glibc.close(descriptor) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
            }
            for _ in 0..<200 {
                let base = 2 * Int.random(in: 10_000..<30_000)
                let udp = [0, 2, 4].allSatisfy { bindable(base + $0, Int32(SOCK_DGRAM.rawValue)) }
                if udp && (0...5).allSatisfy({ bindable(base + $0, Int32(SOCK_STREAM.rawValue)) }) { return base }
            }
            throw IntegrationError("no six free ports in a row on 127.0.0.1")
        }

        @Test("Three instances with their own --name, --osc-port (two apart) and --state-dir, nothing else, run side by side; each one's HTTP port is its OSC port + 1 and answers for it")
        func threeInstances() throws {
            try Rig.run(.server()) { rig in
                let base = try Self.freePortRange()
                var instances: [SoundFitProcess] = []
                defer { instances.forEach { $0.stop() } }
                for (index, name) in ["fit-a", "fit-b", "fit-c"].enumerated() {
                    instances.append(try SoundFitProcess(
                        arguments: ["--server", rig.server.name, "--name", name, "--osc-port", "\(base + 2 * index)"],
                        defaults: false, httpDefault: false))
                }
                for (index, instance) in instances.enumerated() {
                    let ready = try instance.waitForReady()
                    let oscPort = base + 2 * index
                    #expect(Int(ready.oscPort) == oscPort)
                    #expect(ready.httpPort.map(Int.init) == oscPort + 1, "ready line: \(ready.fields)")
                    #expect(ready.client == ["fit-a", "fit-b", "fit-c"][index])
                    let osc = try OSCTestClient(port: ready.oscPort)
                    try osc.ping()
                    let (status, info) = try PlainHTTP.getJSON(port: UInt16(oscPort + 1), "/?HOST_INFO")
                    #expect(status == 200)
                    #expect((info["OSC_PORT"] as? NSNumber)?.intValue == oscPort, "\(info)")
                }
                report("three instances: OSC/HTTP ports", Double(base), unit: "base")
            }
        }

        @Test("With --osc-port 0 and no --http-port the HTTP port is a free one too, not 7701")
        func freePorts() throws {
            try Rig.run(.server()) { rig in
                // Holding 7701 (when free) proves the HTTP port does not default to it.
                let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { Glibc.close(holder) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(7701).bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                listen(holder, 1)
                let instance = try SoundFitProcess(arguments: ["--server", rig.server.name], httpDefault: false)
                defer { instance.stop() }
                let ready = try instance.waitForReady()
                let port = try #require(ready.httpPort, "no HTTP port: \(ready.fields)")
                #expect(port != 7701 && port != 0)
                #expect(try PlainHTTP.get(port: port, "/?HOST_INFO").status == 200)
            }
        }

        @Test("--osc-port 65535 without --http-port: no port above it for HTTP, a message naming --http-port and a non-zero exit")
        func noPortAbove() throws {
            let soundfit = try SoundFitProcess(arguments: ["--no-start-server", "--osc-port", "65535"], defaults: false,
                                               httpDefault: false)
            defer { soundfit.stop() }
            #expect(soundfit.process.waitForExit(timeout: .seconds(30)), "soundfit did not exit")
            #expect(soundfit.process.termination.map { $0.status != 0 && !$0.bySignal } == true)
            #expect(soundfit.process.standardError.contains("--http-port"), "\(soundfit.process.standardError)")
        }

        /// GET `target` on `port`: the status, the `Location` header and every header's name.
        static func redirect(_ port: UInt16, _ target: String) throws -> (status: Int, location: String?, names: Set<String>) {
            let connection = try RawHTTPConnection(port: port)
            connection.send(RawHTTPConnection.request(target, host: "127.0.0.1:\(port)"))
            guard let response = connection.readResponse() else { throw IntegrationError("no answer to \(target)") }
            return (response.status, response.headers["location"], Set(response.headers.keys))
        }

        @Test("/ui redirects to /ui/ (its query kept), a folder of the page likewise, /favicon.ico to the page's icon; /ui opens the page in Chromium with its controls")
        func pageRedirects() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try #require(rig.ready.httpPort)
                let cases: [(String, String)] = [
                    ("/ui", "/ui/"), ("/ui?token=abc", "/ui/?token=abc"), ("/ui/js", "/ui/js/"),
                    ("/favicon.ico", "/ui/favicon.svg"),
                ]
                for (target, location) in cases {
                    let answer = try Self.redirect(port, target)
                    #expect(answer.status == 301, "\(target): \(answer)")
                    #expect(answer.location == location, "\(target): \(answer)")
                }
                // A folder URL with its slash is its index.html: the page's own.
                #expect(try PlainHTTP.get(port: port, "/ui/").status == 200)
                let icon = try PlainHTTP.get(port: port, "/ui/favicon.svg")
                #expect(icon.status == 200)
                #expect(String(decoding: icon.body, as: UTF8.self).contains("<svg"))
                // A decoded CR LF never reaches a header: no such folder, so no redirect at all.
                let injected = try Self.redirect(port, "/ui/js%0d%0aX-Injected:%201")
                #expect(injected.status == 404, "\(injected)")
                #expect(!injected.names.contains("x-injected"))
                // The page opened without the slash builds its controls (the driver waits for them).
                let page = try BrowserDriver(url: "http://127.0.0.1:\(port)/ui")
                defer { page.quit() }
                _ = try? page.screenshot("ui-without-slash")
            }
        }

        @Test("HOST_INFO's OSC_IP is an address the asking client can use: the one its request came in on when soundfit listens on 0.0.0.0, the listening address otherwise")
        func hostInfoAddressReachesTheClient() throws {
            let rig = try Rig.start(.launched(channels: 1, arguments: ["--osc-host", "0.0.0.0", "--name", "sfexposed"]))
            defer { rig.stop() }
            let loopback = try SoundFitProcess(arguments: [
                "--server", rig.server.name, "--no-start-server", "--channels", "1", "--name", "sfloopback",
            ])
            defer { loopback.stop() }
            // The exposed ready line names 0.0.0.0 and a token (ReadyLine reads loopback ones):
            // `http=http://0.0.0.0:PORT/?token=…`. Reads need no token.
            let exposedPort = try #require(rig.soundfit.process.waitForOutput(timeout: .seconds(30)) { output -> UInt16? in
                guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("soundfit ready ") }),
                      let field = line.split(separator: " ").first(where: { $0.hasPrefix("http=http://0.0.0.0:") }) else { return nil }
                return UInt16(field.dropFirst("http=http://0.0.0.0:".count).prefix { $0.isNumber })
            }, "no ready line: \(rig.soundfit.process.standardOutput)")
            let loopbackPort = try #require(try loopback.waitForReady().httpPort)
            for last in [1, 3] as [UInt8] {
                let info = try PlainHTTP.getJSON(port: exposedPort, host: loopbackAddress(last), "/?HOST_INFO")
                #expect(info.status == 200)
                #expect(info.object["OSC_IP"] as? String == "127.0.0.\(last)", "asked on 127.0.0.\(last): \(info.object)")
                let onNode = try PlainHTTP.getJSON(port: exposedPort, host: loopbackAddress(last), "/filter/cutoff?HOST_INFO")
                #expect(onNode.object["OSC_IP"] as? String == "127.0.0.\(last)", "\(onNode.object)")
            }
            let info = try PlainHTTP.getJSON(port: loopbackPort, "/?HOST_INFO")
            #expect(info.object["OSC_IP"] as? String == "127.0.0.1", "\(info.object)")
        }
    }
}
