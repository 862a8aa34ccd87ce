import Foundation
import Testing

extension SoundFitIntegration {
    /// Discovery that reaches. `Tests/Scripts/zeroconf_discovery.py` runs the
    /// real binary in private user, network, mount and PID namespaces with a D-Bus system bus and
    /// an avahi-daemon of its own (never the machine's; no real root needed), a loopback and a
    /// second interface (10.77.0.2); it browses and resolves with python `zeroconf`, asks every
    /// resolved address, and discovers with python-oscquery.
    @Suite("Zeroconf discovery") struct ZeroconfDiscovery {
        static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scripts/zeroconf_discovery.py").path

        @Test("Every address a zeroconf browser resolves answers: 127.0.0.1 only by default, the --osc-host address only, the machine's addresses on 0.0.0.0; avahi started late, stopped and restarted: one log line each; a host name taken by another machine: the next one; python-oscquery discovers and reads /filter/cutoff")
        func everyResolvedAddressAnswers() throws {
            let python = HearingTestSurfaces.venvPython
            try #require(FileManager.default.isExecutableFile(atPath: python),
                         "no test venv at \(python): run scripts/setup.sh with SOUNDFIT_SETUP_TESTS=1")
            let driver = try ChildProcess(label: "zeroconf_discovery.py", executable: python,
                                          arguments: [Self.script, "--soundfit", try SoundFitBinary.path()])
            defer { driver.stop() }
            #expect(driver.waitForExit(timeout: .seconds(300)), "the driver did not end: \(driver.standardOutput)")
            let output = driver.standardOutput
            print(output)
            let lines = output.split(separator: "\n").map(String.init)
            #expect(driver.termination?.status == 0 && lines.last == "passed", "\(output)\n\(driver.standardError)")
            #expect(!lines.contains { $0.hasPrefix("problem:") || $0.hasPrefix("check FAILED") }, "\(output)")

            func measured(_ prefix: String) -> [String] { lines.filter { $0.hasPrefix("measured: \(prefix)") } }
            // Loopback: both services at SoundFit's own host name, 127.0.0.1 alone, before and
            // after avahi-daemon restarted; both answer.
            for label in ["loopback:", "loopback, avahi restarted:"] {
                #expect(measured("\(label) _oscjson._tcp.local. 'SoundFit fit-a' at soundfit-fit-a-").first?
                    .hasSuffix("['127.0.0.1'] port 7701") == true, "\(output)")
                #expect(measured("\(label) _osc._udp.local. 'SoundFit fit-a' at soundfit-fit-a-").first?
                    .hasSuffix("['127.0.0.1'] port 7700") == true, "\(output)")
                #expect(measured("\(label) /ping to 127.0.0.1:7700 -> True").count == 1, "\(output)")
                #expect(measured("\(label) GET http://127.0.0.1:7701/?HOST_INFO -> {'NAME': 'SoundFit fit-a'").count == 1, "\(output)")
            }
            // A client that sends the resolved name as Host is answered; another name is not.
            #expect(measured("loopback: GET http://soundfit-fit-a-").first?.hasSuffix("at 127.0.0.1 -> HOST_INFO") == true, "\(output)")
            #expect(measured("--osc-host: GET http://soundfit-fit-b-").first?.hasSuffix("at 10.77.0.2 -> HOST_INFO") == true, "\(output)")
            #expect(measured("loopback: GET with Host elsewhere.local -> error: HTTP Error 403").count == 1, "\(output)")
            // The same namespace's machine host name has both addresses: loopback-only is
            // SoundFit's doing, not the namespace's.
            #expect(measured("0.0.0.0: _oscjson._tcp.local. 'SoundFit fit-c'").first?.contains("['10.77.0.2', '127.0.0.1']") == true,
                    "\(output)")
            #expect(measured("0.0.0.0: /ping to 10.77.0.2:7720 -> True").count == 1 && measured("0.0.0.0: /ping to 127.0.0.1:7720 -> True").count == 1,
                    "\(output)")
            // --osc-host 10.77.0.2: that address alone.
            #expect(measured("--osc-host: _oscjson._tcp.local. 'SoundFit fit-b' at soundfit-fit-b-").first?
                .hasSuffix("['10.77.0.2'] port 7711") == true, "\(output)")
            #expect(measured("--osc-host: _osc._udp.local. 'SoundFit fit-b' at soundfit-fit-b-").first?
                .hasSuffix("['10.77.0.2'] port 7710") == true, "\(output)")
            #expect(measured("python-oscquery: /filter/cutoff VALUE [1000.0]").count == 1, "\(output)")

            // SoundFit's log: one line per event.
            let log = lines.filter { $0.hasPrefix("log: fit-a: ") }.map { String($0.dropFirst("log: fit-a: ".count)) }
            #expect(log.count == 7, "\(log)")
            #expect(log.first == "zeroconf: avahi-daemon is not running; SoundFit is advertised when it starts", "\(log)")
            #expect(log.filter { $0 == "zeroconf: avahi-daemon went away; SoundFit re-advertises when it returns" }.count == 1, "\(log)")
            #expect(log.filter { $0 == "zeroconf: avahi-daemon is back; SoundFit is advertised again" }.count == 1, "\(log)")
            #expect(log.filter { $0.hasPrefix("zeroconf: advertising _oscjson._tcp on port 7701 as 'SoundFit fit-a' at soundfit-fit-a-")
                && $0.hasSuffix(".local (127.0.0.1)") }.count == 2, "\(log)")
            // Another machine had SoundFit's host name: SoundFit moved to the next one.
            #expect(lines.contains { $0.hasPrefix("log: fit-d: zeroconf: the host name soundfit-fit-d-") && $0.contains("is taken on the network") },
                    "\(output)")
            #expect(measured("taken host name: _oscjson._tcp.local. 'SoundFit fit-d' at soundfit-fit-d-").first?
                .hasSuffix("-2.local. ['127.0.0.1'] port 7741") == true, "\(output)")
            let alone = lines.filter { $0.hasPrefix("log: fit-0: ") }
            #expect(alone.count == 1 && alone[0].contains("not advertised") && alone[0].contains("D-Bus system bus"), "\(alone)")
        }
    }
}
