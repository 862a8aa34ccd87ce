import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Document-level state (`document.json`, an AUv3 `fullStateForDocument`) is
    /// read at start with flags overriding it; the calibration is set with `--calibration` or
    /// `/config/calibration` and travels with `state export`/`import`.
    @Suite("Document settings") struct DocumentSettingsFile {
        @Test("A calibration set over OSC is saved, comes back after a restart, yields to the flag and goes through export and import")
        func calibrationIsDocumentState() throws {
            try Rig.run(.stateful(channels: 1)) { rig in
                let document = rig.stateDirectory.appendingPathComponent("document.json")
                var osc = try rig.osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(100), .string("dB SPL")])
                for bad: OSCValue in [.float(79.99), .float(130.01), .string("loud")] {
                    expectErrorReply(try osc.ask("/config/calibration", [bad], reply: "/config/calibration"), for: "/config/calibration")
                }
                #expect(try osc.ask("/config/calibration", [.float(105)], reply: "/config/calibration").arguments == [.float(105), .string("dB SPL")])
                #expect(try savedCalibration(document) == 105)

                // Read back after a restart; a flag overrides the file (and is saved).
                try rig.restart()
                osc = try rig.osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(105), .string("dB SPL")])
                try rig.restart(arguments: ["--calibration", "92.5"])
                osc = try rig.osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(92.5), .string("dB SPL")])
                #expect(try savedCalibration(document) == 92.5)

                // Export carries it; an import puts an edited one back into document.json.
                let exported = try SoundFitCommandLine.run(["state", "export", "--state-dir", rig.stateDirectory.path])
                #expect(exported.succeeded, "\(exported.standardError)")
                var object = try #require(try JSONSerialization.jsonObject(with: Data(exported.standardOutput.utf8)) as? [String: Any])
                #expect((object["calibration_db_spl"] as? NSNumber)?.doubleValue == 92.5)
                rig.stopSoundFit()
                object["calibration_db_spl"] = 110
                let file = rig.stateDirectory.appendingPathComponent("exported.json")
                try JSONFile.write(object, to: file)
                let imported = try SoundFitCommandLine.run(["state", "import", "--state-dir", rig.stateDirectory.path, file.path])
                #expect(imported.succeeded, "\(imported.standardError)")
                #expect(try savedCalibration(document) == 110)
                osc = try rig.start().osc
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(110), .string("dB SPL")])
            }
        }

        @Test("document.json's OSC host, port and channel count are used when no flag is given")
        func documentSettingsAreReadAtStart() throws {
            try Rig.run(.server(directory: "soundfit-state")) { rig in
                let port = try freeUDPPort()
                try JSONFile.write([
                    "format": "soundfit.document", "version": 1, "calibration_db_spl": 97, "channels": 3,
                    "osc": ["host": "127.0.0.1", "port": Int(port), "allow": ["127.0.0.0/8"]],
                ] as [String: Any], to: rig.directory.appendingPathComponent("document.json"))
                let process = try ChildProcess(
                    label: "soundfit", executable: try SoundFitBinary.path(),
                    arguments: ["run", "--state-dir", rig.directory.path, "--server", rig.server.name, "--no-start-server", "--http-port", "0"])
                defer { process.stop() }
                let ready = try #require(process.waitForOutput(timeout: .seconds(30), ReadyLine.find(in:)),
                                         "\(process.standardError)")
                #expect(ready.oscPort == port)
                #expect(ready.channels == 3)
                let osc = try OSCTestClient(port: port)
                #expect(try osc.ask("/config/calibration", reply: "/config/calibration").arguments == [.float(97), .string("dB SPL")])
            }
        }

        private func savedCalibration(_ document: URL) throws -> Double? {
            (try JSONFile.object(at: document)["calibration_db_spl"] as? NSNumber)?.doubleValue
        }
    }
}

/// A UDP port that was free a moment ago on 127.0.0.1.
func freeUDPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw IntegrationError("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw IntegrationError("bind() failed") }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw IntegrationError("getsockname() failed") }
    return UInt16(bigEndian: address.sin_port)
}
