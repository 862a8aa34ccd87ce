import Foundation
import Testing

extension SoundFitIntegration {
    /// Every packet gets an answer by the real binary, and `/state ,s address` is a query.
    @Suite("Every packet answered") struct EveryPacketAnswered {
        @Test("Extra arguments, an empty bundle and an empty datagram get an /error; /state ,s address answers")
        func everyPacketIsAnswered() throws {
            let rig = try SoundFitRig(channels: 1)
            defer { rig.stop() }
            let osc = rig.osc
            // Every packet is answered: extra arguments, an empty bundle, an empty datagram.
            expectErrorReply(try osc.ask("/list", [.int(1)], reply: "/list/end"), for: "/list",
                             hint: "one optional string, an address pattern")
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
