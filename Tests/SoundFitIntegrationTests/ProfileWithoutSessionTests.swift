import Foundation
import Testing

extension SoundFitIntegration {
    /// A profile submitted while no session is active is not forgotten: its recommendation is
    /// applied when the next session starts.
    @Suite("Profile without a session") struct ProfileWithoutSession {
        @Test("The recommendation of a profile submitted without a session follows at the next activation")
        func recommendationAtNextActivation() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            #expect(try rig.osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            let presets = try rig.osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
            let activated = try rig.osc.ask("/session/activate", [.string("fine_tuning"), .int(3)], reply: "/session")
            #expect(activated.string(0) == "active", "\(activated)")
            #expect(try rig.osc.pollQuery("/processing/preset") { $0 == .string("default") } == .string("default"))
            #expect(try rig.osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try rig.osc.query("/processing/can_enable") == .int(1))
        }

        @Test("A pending recommendation survives a kill -9 and restart, and is followed once")
        func pendingRecommendationSurvivesRestart() throws {
            let rig = try Rig.start(.stateful(channels: 1))
            defer { rig.stop() }
            var osc = try rig.osc
            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")

            // The answer came once the state was journaled: a kill -9 right after keeps it.
            rig.killSoundFit()
            try rig.start()
            osc = try rig.osc
            #expect(try osc.pollQuery("/processing/preset") { $0 == .string("default") } == .string("default"))
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(isClose(try osc.pollQuery("/processing/intensity") { isClose($0, 0.75, tolerance: 1e-6) }, 0.75, tolerance: 1e-6))

            // Followed once: a change made after it is what the next restart restores.
            expectApplied(try osc.set("/processing/intensity", .float(0.3)), "/processing/intensity", .float(0.3))
            rig.stopSoundFit()
            let state = try JSONFile.object(at: rig.stateDirectory.appendingPathComponent("state.json"))
            #expect(state["recommendation_pending"] == nil, "\(state)")
            try rig.start()
            osc = try rig.osc
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            // Session requests take their turns in order, after the start's activation, which
            // follows a pending recommendation within its own turn: once this one is answered
            // (refused: a session is active), a second recommendation would have been applied.
            let turn = try osc.ask("/session/activate", [.string("fine_tuning"), .int(3)], reply: "/session")
            #expect(turn.address == "/error" && turn.string(1)?.contains("already active") == true, "\(turn)")
            #expect(isClose(try osc.query("/processing/intensity"), 0.3, tolerance: 1e-6))
            #expect(try osc.query("/processing/preset") == .string("default"))
        }
    }
}
