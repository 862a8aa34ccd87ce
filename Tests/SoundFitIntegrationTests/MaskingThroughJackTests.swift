import Foundation
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// Masking end to end: the real binary on a real jackd decides masking, plays the narrow-band
    /// noise in the other ear's channel, and a virtual listener with cross-hearing (interaural
    /// attenuation 40 dB, noise raising the cochlea it reaches) hears both through JACK.
    @Suite("Masking through JACK") struct MaskingThroughJack {
        typealias Listening = HearingTestThroughJack

        @Test("A dead ear beside a normal one: no shadow threshold is measured or applied, with masking heard")
        func deadEarBesideANormalEar() throws {
            // Without masking the left ear's tones are heard by the right cochlea from about 40 dB HL.
            let simulated = SimulatedListener.flat(left: 110, right: 0, interauralAttenuation: nil)
            let rig = try Rig.start(.listening(simulated, seed: 41))
            defer { rig.stop() }
            let outcome = try rig.takeTest([.string("both")] + Listening.profileFrequencies.map { .float(Float($0)) },
                                           timeout: .seconds(420))
            #expect(outcome.end.string(0) == "done", "\(outcome.end)")
            let maximum = HearingTestSettings.defaultMaximumLevel
            let left = outcome.thresholds("left")
            for (frequency, level) in left {
                #expect(level >= maximum, "a shadow threshold \(level) dB HL at \(frequency) Hz in the dead ear")
            }
            let dilemmas = outcome.before.first { $0.address == "/test/masking_dilemma" && $0.string(0) == "left" }
            let unresolved = Set(outcome.noResponse("left")).union(left.keys)
                .union((1..<(dilemmas?.arguments.count ?? 1)).compactMap { dilemmas?.number($0) })
            #expect(unresolved == Set(Listening.profileFrequencies), "every left point has an outcome: \(outcome.before)")
            for frequency in Listening.profileFrequencies {
                let right = outcome.thresholds("right")[frequency]
                #expect(right.map { abs($0 - 0) <= 5 } == true, "right ear at \(frequency) Hz: \(String(describing: right))")
            }
            // The listener heard masking noise in the right ear while the left ear was tested.
            let masked = rig.listener.presentations.filter { $0.ear == .left && $0.maskingLevel != nil }
            #expect(!masked.isEmpty, "no left-ear tone came with masking noise in the right ear")
            // Whatever became the profile holds no shadow: a submitted left ear is at the maximum + 5.
            if outcome.end.arguments.contains(where: { $0.stringValue == "submitted" }) {
                rig.rig.osc.send("/profile/audiogram")
                let audiogram = try rig.rig.osc.waitFor("left audiogram") {
                    $0.address == "/profile/audiogram" && $0.string(0) == "left"
                }.match
                for index in stride(from: 1, to: audiogram.arguments.count - 1, by: 2) {
                    #expect((audiogram.number(index + 1) ?? 0) >= maximum, "profile left: \(audiogram)")
                }
            }
            report("dead ear: left tones presented with masking", Double(masked.count), unit: "tones")
        }

        @Test("Asymmetric ears: 30 dB apart both within ±5 dB; 50 dB apart the worse one found under masking, not its shadow")
        func asymmetricEars() throws {
            // 65/35: the left ear's tones reach the right cochlea at 25 dB HL, below its 35: no shadow.
            // 70/20: unmasked, the right cochlea hears the left ear's tones from 60 dB HL (a shadow 10 dB
            // better than the truth); masking the right ear must find 70.
            for (index, ears) in [(left: 65.0, right: 35.0, masks: false), (left: 70.0, right: 20.0, masks: true)].enumerated() {
                let simulated = SimulatedListener.flat(left: ears.left, right: ears.right, interauralAttenuation: nil)
                let rig = try Rig.start(.listening(simulated, seed: 42 + UInt64(index)))
                defer { rig.stop() }
                let outcome = try rig.takeTest([.string("both"), .float(1000)], timeout: .seconds(300))
                #expect(outcome.end.string(0) == "done", "\(outcome.end)")
                let left = outcome.thresholds("left")[1000], right = outcome.thresholds("right")[1000]
                #expect(left.map { abs($0 - ears.left) <= 5 } == true, "\(ears): left \(String(describing: left))")
                #expect(right.map { abs($0 - ears.right) <= 5 } == true, "\(ears): right \(String(describing: right))")
                let masked = rig.listener.presentations.filter { $0.ear == .left && $0.maskingLevel != nil }
                if ears.masks { #expect(!masked.isEmpty, "\(ears): the left ear was not re-measured under masking") }
                report("asymmetric \(Int(ears.left))/\(Int(ears.right)): left tones with masking", Double(masked.count), unit: "tones")
            }
        }
    }
}
