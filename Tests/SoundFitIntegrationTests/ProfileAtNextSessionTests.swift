import Foundation
import Testing

extension SoundFitIntegration {
    /// A stored hearing profile at the next session. One submitted while no session is active is
    /// not forgotten: its recommendation is applied when the next session starts. And a new
    /// session gets presets generated for its tech level and the recommendation, not preset
    /// `none` with personalization silently off — also after a restart.
    @Suite("A hearing profile at the next session") struct ProfileAtNextSession {
        @Test("The recommendation of a profile submitted without a session follows at the next activation")
        func recommendationAtNextActivation() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            #expect(try rig.osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            try submitN3(rig.osc)
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
            try submitN3(osc)

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

        @Test("Another tech level, a re-activation and a restart keep the personalization preset and processing on")
        func newSessionsRegenerateThePreset() throws {
            let rig = try Rig.start(.stateful(channels: 1))
            defer { rig.stop() }
            var osc = try rig.osc
            try submitN3(osc)
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            // A preset request is `pending` while the preset is generated, then `applying`, `applied`.
            let up = try osc.set("/processing/preset", .string("up"))
            #expect(up.last?.arguments.prefix(3) == [.string("/processing/preset"), .string("applied"), .string("up")], "\(up)")

            // Another tech level: the same variant, generated for tech level 4.
            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            let activated = try osc.ask("/session/activate", [.string("fine_tuning"), .int(4)], reply: "/session")
            #expect(activated.arguments == [.string("active"), .string("fine_tuning"), .int(4)], "\(activated)")
            try expectPersonalized(osc, preset: "up", techLevel: 4)

            // Re-activation with the same tech level, then back to tech level 3 in single-preset
            // mode (which offers only the default variant).
            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            #expect(try osc.ask("/session/activate", [.string("fine_tuning"), .int(4)], reply: "/session").string(0) == "active")
            try expectPersonalized(osc, preset: "up", techLevel: 4)
            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            #expect(try osc.ask("/session/activate", [.string("single_preset"), .int(3)], reply: "/session").string(0) == "active")
            try expectPersonalized(osc, preset: "default", techLevel: 3)

            // What was saved comes back after a restart (at the configured tech level 3).
            #expect(waitUntilSaved(rig.stateDirectory, "/processing/enabled", 1) != nil)
            try rig.restart()
            osc = try rig.osc
            try expectPersonalized(osc, preset: "default", techLevel: 3)
        }

        /// Submits audiogram N3 for both ears and expects its presets in answer.
        private func submitN3(_ osc: OSCTestClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)", sourceLocation: sourceLocation)
        }

        /// Preset, `can_enable` 1, processing on, and the preset applied for `techLevel`.
        private func expectPersonalized(_ osc: OSCTestClient, preset: String, techLevel: Int32,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try osc.pollQuery("/processing/preset") { $0 == .string(preset) } == .string(preset),
                    sourceLocation: sourceLocation)
            #expect(try osc.pollQuery("/processing/can_enable") { $0 == .int(1) } == .int(1), sourceLocation: sourceLocation)
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1), sourceLocation: sourceLocation)
            #expect(try osc.query("/processing/fitting") == .int(techLevel), sourceLocation: sourceLocation)
            let state = try osc.ask("/state", [.string("/processing/preset")], reply: "/state")
            #expect(state.arguments.prefix(3) == [.string("/processing/preset"), .string("applied"), .string(preset)],
                    "\(state)", sourceLocation: sourceLocation)
        }
    }
}
