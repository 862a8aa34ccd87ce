import Foundation
import Testing

extension SoundFitIntegration {
    /// Issue 11, gap 17: events that make values stale reach subscribers as
    /// `/invalidated ,s address … ,s cause`, and that notification is never answered.
    @Suite("Invalidation notifications") struct InvalidationNotifications {
        @Test("A subscriber hears which values a profile replacement, a tech-level change and a calibration change made stale")
        func subscribersHearOfStaleValues() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            let subscriber = try OSCTestClient(port: rig.ready.oscPort)
            try subscriber.subscribeDrainingValues()

            // The first profile replaces nothing; the second does.
            _ = try osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            #expect(!subscriber.collect(for: .milliseconds(500)).contains { $0.address == "/invalidated" })
            _ = try osc.request("/profile/audiogram", TestAudiogram.n2.oscArguments(ear: "both"), reply: "/profile/presets")
            let replaced = try waitForInvalidation(subscriber)
            #expect(replaced.arguments == [.string("/processing/preset"), .string("/processing/can_enable"),
                                           .string("hearing_profile_replaced")], "\(replaced)")

            #expect(try osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            #expect(try osc.ask("/session/activate", [.string("fine_tuning"), .int(2)], reply: "/session").string(0) == "active")
            let techLevel = try waitForInvalidation(subscriber)
            #expect(techLevel.arguments == [.string("/processing/preset"), .string("/processing/can_enable"),
                                            .string("/processing/fitting"), .string("tech_level_changed")], "\(techLevel)")
            #expect(try osc.query("/processing/fitting") == .int(2))

            let calibration = try osc.ask("/config/calibration", [.float(105)], reply: "/config/calibration")
            #expect(calibration.arguments == [.float(105)], "\(calibration)")
            let calibrated = try waitForInvalidation(subscriber)
            #expect(calibrated.arguments == [.string("/processing/preset"), .string("calibration_changed")], "\(calibrated)")
        }

        @Test("/invalidated sent to SoundFit is a reply form: never answered")
        func theNotificationIsNeverAnswered() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            osc.send("/invalidated", .string("/filter/cutoff"), .string("server_lost_and_back"))
            osc.send("/invalidated")
            osc.send("/ping")
            let pong = try osc.waitFor("/pong") { $0.address == "/pong" }
            #expect(pong.before.isEmpty, "\(pong.before)")
            let extra = osc.collect(for: .milliseconds(300))
            #expect(extra.isEmpty, "\(extra)")
        }

        private func waitForInvalidation(_ client: OSCTestClient) throws -> OSCTestMessage {
            try client.waitFor("/invalidated") { $0.address == "/invalidated" }.match
        }
    }
}
