import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Events that make values stale reach subscribers as
    /// `/invalidated ,s address … ,s cause`, and that notification is never answered.
    @Suite("Invalidation notifications") struct InvalidationNotifications {
        @Test("A subscriber hears which values a profile replacement, a tech-level change and a calibration change made stale")
        func subscribersHearOfStaleValues() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let subscriber = try OSCTestClient.subscribed(to: rig.ready.oscPort)

            // The first profile replaces nothing; the second does.
            _ = try rig.osc.request("/profile/audiogram", TestAudiogram.n3.oscArguments(ear: "both"), reply: "/profile/presets")
            // /synced follows every notification the request caused, to every subscriber.
            try rig.osc.sync()
            #expect(!subscriber.collect(for: .zero).contains { $0.address == "/invalidated" })
            _ = try rig.osc.request("/profile/audiogram", TestAudiogram.n2.oscArguments(ear: "both"), reply: "/profile/presets")
            let replaced = try waitForInvalidation(subscriber)
            #expect(replaced.arguments == [.string("/processing/preset"), .string("/processing/can_enable"),
                                           .string("hearing_profile_replaced")], "\(replaced)")

            #expect(try rig.osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
            #expect(try rig.osc.ask("/session/activate", [.string("fine_tuning"), .int(2)], reply: "/session").string(0) == "active")
            let techLevel = try waitForInvalidation(subscriber)
            #expect(techLevel.arguments == [.string("/processing/preset"), .string("/processing/can_enable"),
                                            .string("/processing/fitting"), .string("tech_level_changed")], "\(techLevel)")
            #expect(try rig.osc.query("/processing/fitting") == .int(2))

            let calibration = try rig.osc.ask("/config/calibration", [.float(105)], reply: "/config/calibration")
            #expect(calibration.arguments == [.float(105), .string("dB SPL")], "\(calibration)")
            let calibrated = try waitForInvalidation(subscriber)
            #expect(calibrated.arguments == [.string("/processing/preset"), .string("calibration_changed")], "\(calibrated)")
        }

        @Test("A JACK server lost and back invalidates every parameter")
        func serverLostAndBack() throws {
            let rig = try Rig.start(.launched(channels: 1))
            defer { rig.stop() }
            let ready = try rig.soundfit.waitForReady()
            let osc = try OSCTestClient(port: ready.oscPort)
            try osc.waitForSession()
            let subscriber = try OSCTestClient.subscribed(to: ready.oscPort)
            let addresses = try listedAddresses(osc)
            #expect(addresses.count == 15, "\(addresses)")

            rig.server.kill(signal: SIGKILL)
            _ = try osc.waitForStatus(timeout: .seconds(15)) { $0["connected"] == .int(0) }
            try rig.server.start()
            // The first /invalidated is the one of the server's return: one sent while it was
            // away (to this subscriber, in order) would come first, with another cause.
            let invalidated = try subscriber.waitFor("/invalidated", timeout: .seconds(30)) { $0.address == "/invalidated" }.match
            #expect(invalidated.arguments == addresses.map(OSCValue.string) + [.string("server_lost_and_back")], "\(invalidated)")
        }

        /// The addresses `/list` names, in its order.
        private func listedAddresses(_ osc: OSCTestClient) throws -> [String] {
            osc.send("/list")
            let end = try osc.waitFor("/list/end") { $0.address == "/list/end" }
            return end.before.filter { $0.address == "/list/param" }.compactMap { $0.string(0) }
        }

        @Test("/invalidated sent to SoundFit is a reply form: never answered")
        func theNotificationIsNeverAnswered() throws {
            try Rig.run(.process(channels: 1)) { rig in
                rig.osc.send("/invalidated", .string("/filter/cutoff"), .string("server_lost_and_back"))
                rig.osc.send("/invalidated")
                rig.osc.send("/ping")
                let pong = try rig.osc.waitFor("/pong") { $0.address == "/pong" }
                #expect(pong.before.isEmpty, "\(pong.before)")
                let extra = try rig.osc.sync()  // a late answer to either would arrive before /synced
                #expect(extra.isEmpty, "\(extra)")
            }
        }

        private func waitForInvalidation(_ client: OSCTestClient) throws -> OSCTestMessage {
            try client.waitFor("/invalidated") { $0.address == "/invalidated" }.match
        }
    }
}
