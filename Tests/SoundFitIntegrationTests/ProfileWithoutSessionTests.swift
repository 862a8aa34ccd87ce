import Foundation
import Testing

extension SoundFitIntegration {
    /// A profile submitted while no session is active is not forgotten: its recommendation is
    /// applied when the next session starts.
    @Suite("Profile without a session") struct ProfileWithoutSession {
        @Test("The recommendation of a profile submitted without a session follows at the next activation")
        func recommendationAtNextActivation() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
            let activated = try osc.ask("/session/activate", [.string("fine_tuning"), .int(3)], reply: "/session")
            #expect(activated.string(0) == "active", "\(activated)")
            #expect(try osc.pollQuery("/processing/preset") { $0 == .string("default") } == .string("default"))
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try osc.query("/processing/can_enable") == .int(1))
        }
    }
}
