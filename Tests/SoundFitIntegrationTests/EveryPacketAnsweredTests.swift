import Foundation
import Testing

extension SoundFitIntegration {
    /// Every packet gets an answer by the real binary, and `/state ,s address` is a query.
    @Suite("Every packet answered") struct EveryPacketAnswered {
        @Test("Extra arguments, an empty bundle and an empty datagram get an /error; /state ,s address answers")
        func everyPacketIsAnswered() throws {
            try Rig.run(.process(channels: 1)) { rig in
                // Every packet is answered: extra arguments, an empty bundle, an empty datagram.
                expectErrorReply(try rig.osc.ask("/list", [.int(1)], reply: "/list/end"), for: "/list",
                                 hint: "one optional string, an address pattern")
                rig.osc.sendRaw(Array("#bundle".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1])
                let emptyBundle = try rig.osc.waitFor("/error for an empty bundle") { $0.address == "/error" }.match
                #expect(emptyBundle.string(1)?.contains("empty bundle") == true, "\(emptyBundle)")
                rig.osc.sendRaw([])
                let emptyDatagram = try rig.osc.waitFor("/error for an empty datagram") { $0.address == "/error" }.match
                #expect(emptyDatagram.string(0) == "", "\(emptyDatagram)")
                // `/state ,s address` queries the update state of the parameter's latest change.
                let state = try rig.osc.ask("/state", [.string("/filter/cutoff")], reply: "/state")
                #expect(state.arguments == [.string("/filter/cutoff"), .string("applied"), .float(1000)], "\(state)")
            }
        }
    }
}
