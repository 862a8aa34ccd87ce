import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The share of the prescription applied now, over real OSC — the
    /// `/personalization/gains` query and `/status`'s `applied_share_db` and `gain_capped_bands`.
    @Suite("Prescription share") struct PrescriptionShare {
        /// `/personalization/gains` → the summary and the two ears' `hz, prescribed, applied` triples.
        private func gains(_ osc: OSCTestClient) throws
            -> (summary: OSCTestMessage, left: [(Double, Double, Double)], right: [(Double, Double, Double)]) {
            osc.send("/personalization/gains")
            let summary = try osc.waitFor("/personalization/gains") { $0.address == "/personalization/gains" }.match
            func ear(_ name: String) throws -> [(Double, Double, Double)] {
                let message = try osc.waitFor(name) { $0.address == name }.match
                #expect(message.arguments.last?.stringValue == "dB", "\(message)")
                let numbers = message.arguments.dropLast().compactMap(\.number)
                #expect(numbers.count % 3 == 0 && numbers.count == message.arguments.count - 1, "\(message)")
                return stride(from: 0, to: numbers.count - 2, by: 3).map { (numbers[$0], numbers[$0 + 1], numbers[$0 + 2]) }
            }
            return (summary, try ear("/personalization/gains/left"), try ear("/personalization/gains/right"))
        }

        /// 20·log10(1 + i·(10^(g/20) − 1)), written here from docs/Personalization.md.
        private static func atIntensity(_ gain: Double, _ intensity: Double) -> Double {
            20 * log10(1 + intensity * (pow(10, gain / 20) - 1))
        }

        @Test("N3 at intensity 0.75: prescribed = NAL-R, applied = linear-gain interpolation, share in /status")
        func n3AtThreeQuarters() throws {
            let directory = try UniqueName.temporaryDirectory("sf-share")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n3, in: directory)
            let printed = try #require(try PrintedPresets.generate(profile: profile).variants["default"])
            let rig = try Rig.start(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "3"]))
            defer { rig.stop() }
            // The recommendation is in effect at start: default preset, enabled, intensity 0.75.
            #expect(try rig.osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try rig.osc.query("/processing/intensity") == .float(0.75))

            var answer = try gains(rig.osc)
            #expect(answer.summary.string(0) == "default" && answer.summary.number(1) == 0.75 && answer.summary.number(2) == 1,
                    "\(answer.summary)")
            #expect(answer.left.count == 8 && answer.right.count == 8)
            var differences: [Double] = []
            for (index, (hz, prescribed, applied)) in (answer.left + answer.right).enumerated() {
                let band = printed.left[index % 8]
                #expect(hz == band.centre)
                // N3: no severe-loss terms, so NAL-R at the eight points is NAL-RP.
                #expect(abs(prescribed - TestAudiogram.n3.nalR(at: hz)) <= 0.01, "\(hz) Hz: \(prescribed)")
                let expected = Self.atIntensity(band.gain, 0.75)
                #expect(abs(applied - expected) <= 0.01, "\(hz) Hz: applied \(applied), expected \(expected)")
                differences.append(applied - prescribed)
            }
            let share = differences.reduce(0, +) / Double(differences.count)
            print("measured: N3 tech level 3, intensity 0.75, applied − prescribed per band (left, dB) = "
                  + differences.prefix(8).map { String(format: "%.2f", $0) }.joined(separator: " "))
            report("N3 at intensity 0.75: applied share", share, unit: "dB")
            #expect(share < -1 && share > -2.5, "at 0.75 every band loses 0…2.5 dB: \(share)")
            #expect(abs((answer.summary.number(3) ?? .nan) - share) <= 0.01, "\(answer.summary)")
            #expect(answer.summary.number(4) == 0, "N3 binds no safety cap: \(answer.summary)")
            var status = try rig.osc.status()
            #expect(abs((status["applied_share_db"]?.number ?? .nan) - share) <= 0.01, "\(status)")
            #expect(status["gain_capped_bands"] == .int(0), "\(status)")

            // Intensity 1: the whole prescription.
            expectApplied(try rig.osc.set("/processing/intensity", .float(1)), "/processing/intensity", .float(1))
            status = try rig.osc.status()
            #expect(abs(status["applied_share_db"]?.number ?? .nan) <= 0.01, "\(status)")

            // Disabled: nothing applied, the share is minus the mean prescription.
            expectApplied(try rig.osc.set("/processing/enabled", .int(0)), "/processing/enabled", .int(0))
            answer = try gains(rig.osc)
            #expect(answer.summary.number(2) == 0 && (answer.left + answer.right).allSatisfy { $0.2 == 0 }, "\(answer)")
            let meanPrescribed = (answer.left + answer.right).map(\.1).reduce(0, +) / 16
            status = try rig.osc.status()
            #expect(abs((status["applied_share_db"]?.number ?? .nan) + meanPrescribed) <= 0.01, "\(status)")
            #expect(meanPrescribed > 15, "N3's mean NAL-R gain over 250…6000 Hz: \(meanPrescribed)")
        }

        @Test("/personalization/gains without a profile: /error; with arguments it is a reply: no answer")
        func errors() throws {
            try Rig.run(.process(channels: 2)) { rig in
                rig.osc.send("/personalization/gains")
                let error = try rig.osc.waitFor("/error") { $0.address == "/error" }.match
                #expect(error.string(0) == "/personalization/gains" && (error.string(1) ?? "").contains("no hearing profile"), "\(error)")
                #expect(try rig.osc.status()["applied_share_db"] == nil)
                // With arguments it has the form of the reply: never answered (two servers would
                // answer each other forever); the /pong after it shows nothing came before it.
                rig.osc.send("/personalization/gains", .string("default"))
                rig.osc.send("/ping")
                let pong = try rig.osc.waitFor("/pong") { $0.address == "/pong" }
                #expect(pong.before.isEmpty, "\(pong.before)")
            }
        }
    }
}
