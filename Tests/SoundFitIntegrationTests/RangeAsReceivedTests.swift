import Foundation
import Testing

extension SoundFitIntegration {
    /// "Rejected, never clamped" for doubles and ints as well: the real binary checks a number as
    /// it arrived, before converting it.
    @Suite("Range checks as received") struct RangeAsReceived {
        @Test("A double just outside a range, or one that would round to -0.0 or 0 ms, is rejected")
        func doublesAreCheckedAsSent() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            expectErrorReply(try osc.ask("/filter/cutoff", [.double(20000.000000001)], reply: "/state"),
                             for: "/filter/cutoff", hint: "out of range")
            expectErrorReply(try osc.ask("/processing/intensity", [.double(-1e-300)], reply: "/state"),
                             for: "/processing/intensity", hint: "out of range")
            expectErrorReply(try osc.ask("/config/delivery", [.string("discrete"), .double(1e-9)], reply: "/config/delivery"),
                             for: "/config/delivery", hint: "0.001")
            #expect(try osc.query("/filter/cutoff") == .float(1000))
            #expect(try osc.query("/processing/intensity") == .float(0.5))
            let delivery = try osc.ask("/config/delivery", reply: "/config/delivery")
            #expect(delivery.string(0) == "continuous", "\(delivery)")
            // Every packet is answered: extra arguments, an empty bundle, an empty datagram.
            expectErrorReply(try osc.ask("/list", [.int(1)], reply: "/list/end"), for: "/list", hint: "no arguments")
            osc.sendRaw(Array("#bundle".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1])
            let emptyBundle = try osc.waitFor("/error for an empty bundle") { $0.address == "/error" }.match
            #expect(emptyBundle.string(1)?.contains("empty bundle") == true, "\(emptyBundle)")
            osc.sendRaw([])
            let emptyDatagram = try osc.waitFor("/error for an empty datagram") { $0.address == "/error" }.match
            #expect(emptyDatagram.string(0) == "", "\(emptyDatagram)")
            // `/state ,s address` queries the update state of the parameter's latest change.
            let state = try osc.ask("/state", [.string("/filter/cutoff")], reply: "/state")
            #expect(state.arguments == [.string("/filter/cutoff"), .string("applied"), .float(1000)], "\(state)")
        }
    }
}

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
