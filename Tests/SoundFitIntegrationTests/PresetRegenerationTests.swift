import Foundation
import Testing

extension SoundFitIntegration {
    /// A new session with a stored hearing profile gets presets generated for
    /// its tech level and the recommendation, not preset `none` with personalization silently off —
    /// also after a restart.
    @Suite("Preset regeneration for a new session") struct PresetRegeneration {
        @Test("Another tech level, a re-activation and a restart keep the personalization preset and processing on")
        func newSessionsRegenerateThePreset() throws {
            let rig = try Rig.start(.stateful(channels: 1))
            defer { rig.stop() }
            var osc = try rig.osc
            let presets = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(presets.address == "/profile/presets", "\(presets)")
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
