import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// JACK metadata: patchbays show which ear a port carries, in channel order, in pairs — set at
    /// registration, set again after the server comes back, removed when SoundFit closes.
    @Suite("JACK metadata") struct JackMetadata {
        /// `jack_property -l --port PORT` as key → value.
        private func properties(_ port: String, server: String) throws -> [String: String] {
            let text = try JackTools.run("jack_property", server: server, "-l", "--port", port)
            var result: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard line.hasPrefix("key: "), let value = line.range(of: " value: ") else { continue }
                let key = String(line[line.index(line.startIndex, offsetBy: 5)..<value.lowerBound])
                var rest = String(line[value.upperBound...])
                if let type = rest.range(of: " type: ") { rest = String(rest[..<type.lowerBound]) }
                result[key] = rest
            }
            return result
        }

        private func expectDescribed(_ client: String, server: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let expected: [(String, String, String, String)] = [
                ("input_1", "Left ear in 1", "1", "Ears in 1"), ("input_2", "Right ear in 1", "2", "Ears in 1"),
                ("input_3", "Left ear in 2", "3", "Ears in 2"), ("output_1", "Left ear out 1", "1", "Ears out 1"),
                ("output_2", "Right ear out 1", "2", "Ears out 1"), ("output_3", "Left ear out 2", "3", "Ears out 2"),
            ]
            for (port, pretty, order, group) in expected {
                let found = try properties("\(client):\(port)", server: server)
                #expect(found["http://jackaudio.org/metadata/pretty-name"] == pretty, "\(port): \(found)", sourceLocation: sourceLocation)
                #expect(found["http://jackaudio.org/metadata/order"] == order, "\(port): \(found)", sourceLocation: sourceLocation)
                #expect(found["http://jackaudio.org/metadata/port-group"] == group, "\(port): \(found)", sourceLocation: sourceLocation)
            }
        }

        @Test("Pretty names, order and port groups, set again after a server restart, gone after shutdown")
        func portsAreDescribed() throws {
            try Rig.run(.launched(channels: 3)) { rig in
                let ready = try rig.soundfit.waitForReady()
                try expectDescribed(ready.client, server: rig.server.name)

                let osc = try OSCTestClient(port: ready.oscPort)
                rig.server.kill(signal: SIGKILL)
                _ = try osc.waitForStatus(timeout: .seconds(15)) { $0["connected"] == .int(0) }
                try rig.server.start()
                _ = try osc.waitForStatus(timeout: .seconds(30)) { $0["connected"] == .int(1) }
                try expectDescribed(ready.client, server: rig.server.name)

                rig.soundfit.stop()
                let remaining = try JackTools.run("jack_property", server: rig.server.name, "-l")
                #expect(!remaining.contains("ear in") && !remaining.contains("ear out") && !remaining.contains("MIDI control in"),
                        "left behind: \(remaining)")
            }
        }
    }
}
