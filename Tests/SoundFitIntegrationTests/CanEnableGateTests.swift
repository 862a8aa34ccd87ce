import Foundation
import Testing

extension SoundFitIntegration {
    /// `can_enable` gates enabling: without a personalization preset, enabling is refused with
    /// the reason; disabling is always allowed.
    @Suite("can_enable gates enabling") struct CanEnableGate {
        @Test("/processing/enabled 1 while can_enable is 0 fails with the reason")
        func enablingWithoutPresetFails() throws {
            try Rig.run(.process(channels: 1)) { rig in
                #expect(try rig.osc.query("/processing/can_enable") == .int(0))
                expectErrorReply(try rig.osc.ask("/processing/enabled", [.int(1)], reply: "/state"),
                                 for: "/processing/enabled", hint: "can_enable")
                #expect(try rig.osc.query("/processing/enabled") == .int(0))
                expectApplied(try rig.osc.set("/processing/enabled", .int(0)), "/processing/enabled", .int(0), changed: false)
            }
        }
    }
}
