import Foundation
import Testing

extension SoundFitIntegration {
    /// The current patch of a fresh start is a factory patch, and a patch
    /// loaded while no session is active applies its kernel values at once and its session
    /// values at the next activation, reported as pending until then.
    @Suite("Patches without a session") struct PatchWithoutSession {
        @Test("A fresh start runs at factory patch 0, Transparent, unmodified")
        func freshStartIsAtTheFirstFactoryPatch() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let current = try rig.osc.ask("/patch/current", reply: "/patch/current")
                #expect(current.arguments == [.int(0), .string("Transparent"), .int(0), .int(0)], "\(current)")
                // It is the state SoundFit runs: moving a value away modifies it.
                expectApplied(try rig.osc.set("/filter/cutoff", .float(2000)), "/filter/cutoff", .float(2000))
                let modified = try rig.osc.ask("/patch/current", reply: "/patch/current")
                #expect(modified.arguments == [.int(0), .string("Transparent"), .int(1), .int(0)], "\(modified)")
            }
        }

        @Test("Without a session a patch's kernel values apply at once and its session values wait for the next session")
        func sessionValuesWaitForTheNextSession() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let subscriber = try OSCTestClient.subscribed(to: rig.ready.oscPort)
            _ = try rig.osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(try rig.osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            #expect(try rig.osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")

            // Patch 2, "Lowpass 1 kHz": filter on; personalization off, intensity 0.5, no preset.
            let loaded = try rig.osc.ask("/patch/load", [.int(2)], reply: "/patch/current")
            #expect(loaded.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(0), .int(1)], "\(loaded)")
            #expect(try rig.osc.query("/filter/enabled") == .int(1))
            let state = try rig.osc.ask("/state", [.string("/filter/enabled")], reply: "/state")
            #expect(state.arguments.prefix(3) == [.string("/filter/enabled"), .string("applied"), .int(1)], "\(state)")
            expectErrorReply(try rig.osc.ask("/processing/enabled", reply: "/processing/enabled"), for: "/processing/enabled",
                             hint: "session")
            #expect(try rig.osc.ask("/patch/current", reply: "/patch/current").arguments.last == .int(1))

            #expect(try rig.osc.ask("/session/activate", [.string("fine_tuning"), .int(3)], reply: "/session").string(0) == "active")
            #expect(try rig.osc.pollQuery("/processing/enabled") { $0 == .int(0) } == .int(0))
            #expect(try rig.osc.pollQuery("/processing/preset") { $0 == .string("none") } == .string("none"))
            #expect(try rig.osc.pollQuery("/processing/intensity") { isClose($0, 0.5, tolerance: 1e-6) }.number == 0.5)
            let applied = try rig.osc.ask("/patch/current", reply: "/patch/current")
            #expect(applied.arguments == [.int(2), .string("Lowpass 1 kHz"), .int(0), .int(0)], "\(applied)")
            // Subscribers heard the pending patch, then that nothing is pending any more.
            let notification = try subscriber.waitFor("/patch/current 2 pending 0") {
                $0.address == "/patch/current" && $0.arguments.first == .int(2) && $0.arguments.last == .int(0)
            }
            #expect(notification.before.contains {
                $0.address == "/patch/current" && $0.arguments.first == .int(2) && $0.arguments.last == .int(1)
            }, "\(notification.before)")
        }
    }
}
