import Foundation
import Testing

extension SoundFitIntegration {
    /// "Rejected, never clamped" for doubles and ints as well: the real binary checks a number as
    /// it arrived, before converting it.
    @Suite("Range checks as received") struct RangeAsReceived {
        @Test("A double just outside a range, or one that would round to -0.0 or 0 ms, is rejected")
        func doublesAreCheckedAsSent() throws {
            try Rig.run(.process(channels: 1)) { rig in
                expectErrorReply(try rig.osc.ask("/filter/cutoff", [.double(20000.000000001)], reply: "/state"),
                                 for: "/filter/cutoff", hint: "out of range")
                expectErrorReply(try rig.osc.ask("/processing/intensity", [.double(-1e-300)], reply: "/state"),
                                 for: "/processing/intensity", hint: "out of range")
                expectErrorReply(try rig.osc.ask("/config/delivery", [.string("discrete"), .double(1e-9)], reply: "/config/delivery"),
                                 for: "/config/delivery", hint: "0.001")
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                #expect(try rig.osc.query("/processing/intensity") == .float(0.5))
                let delivery = try rig.osc.ask("/config/delivery", reply: "/config/delivery")
                #expect(delivery.string(0) == "continuous", "\(delivery)")
            }
        }
    }
}
