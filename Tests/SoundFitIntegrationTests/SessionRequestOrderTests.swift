import Foundation
import Testing

extension SoundFitIntegration {
    /// An activation racing a deactivation. Session requests run in the
    /// order they arrived and each is answered with its own outcome, so no requester is told
    /// `/session inactive` for an activation.
    @Suite("Session request order") struct SessionRequestOrder {
        @Test("An activation and a deactivation from two clients are answered with their own outcomes, in arrival order")
        func twoClientsRacing() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let activator = rig.osc
                let deactivator = try OSCTestClient(port: rig.ready.oscPort)
                let activation = OSCWire.encode(OSCTestMessage("/session/activate", [.string("fine_tuning"), .int(2)]))
                let deactivation = OSCWire.encode(OSCTestMessage("/session/deactivate"))
                for round in 1...5 {
                    #expect(try deactivator.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
                    activator.sendRaw(activation)
                    deactivator.sendRaw(deactivation)
                    let activated = try activator.waitFor("answer to /session/activate") {
                        $0.address == "/session" || $0.address == "/error"
                    }.match
                    #expect(activated.arguments == [.string("active"), .string("fine_tuning"), .int(2)], "round \(round): \(activated)")
                    let deactivated = try deactivator.waitFor("answer to /session/deactivate") {
                        $0.address == "/session" || $0.address == "/error"
                    }.match
                    #expect(deactivated.arguments == [.string("inactive")], "round \(round): \(deactivated)")
                    #expect(try deactivator.session().arguments == [.string("inactive")], "round \(round)")
                }
            }
        }

        @Test("A bundle of an activation and a deactivation is answered active, then inactive")
        func oneBundle() throws {
            try Rig.run(.process(channels: 1)) { rig in
                #expect(try rig.osc.ask("/session/deactivate", reply: "/session").string(0) == "inactive")
                rig.osc.sendBundle([OSCTestMessage("/session/activate", [.string("single_preset"), .int(3)]),
                                OSCTestMessage("/session/deactivate")])
                let first = try rig.osc.waitFor("first answer") { $0.address == "/session" || $0.address == "/error" }.match
                let second = try rig.osc.waitFor("second answer") { $0.address == "/session" || $0.address == "/error" }.match
                #expect(first.arguments == [.string("active"), .string("single_preset"), .int(3)], "\(first)")
                #expect(second.arguments == [.string("inactive")], "\(second)")
                #expect(try rig.osc.session().arguments == [.string("inactive")])
            }
        }
    }
}
