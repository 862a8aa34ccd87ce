import Foundation
import Testing

extension SoundFitIntegration {
    /// `can_enable` gates enabling: without a personalization preset, enabling is refused with
    /// the reason; disabling is always allowed.
    @Suite("can_enable gates enabling") struct CanEnableGate {
        @Test("/processing/enabled 1 while can_enable is 0 fails with the reason")
        func enablingWithoutPresetFails() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            #expect(try osc.query("/processing/can_enable") == .int(0))
            expectErrorReply(try osc.ask("/processing/enabled", [.int(1)], reply: "/state"),
                             for: "/processing/enabled", hint: "can_enable")
            #expect(try osc.query("/processing/enabled") == .int(0))
            expectApplied(try osc.set("/processing/enabled", .int(0)), "/processing/enabled", .int(0), changed: false)
        }
    }
}
