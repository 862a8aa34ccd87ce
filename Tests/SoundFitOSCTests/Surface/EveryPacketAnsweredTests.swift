import OSCCore
import SoundFitEngine
@testable import SoundFitOSC
import Testing

/// One rule for arguments a command does not take (reject), and an answer for every packet.
@Suite struct EveryPacketAnsweredTests {
    @Test func extraArgumentsEmptyBundlesAndEmptyDatagramsAreAnswered() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        for (address, argument, reason) in [("/list", OSCArgument.int32(1), "/list takes one optional string, an address pattern; got ,i"),
                                            ("/patch/list", .string("x"), "/patch/list takes [,i offset]")] {
            surface.send(OSCMessage(address, [argument]))
            let reply = await surface.next()
            #expect(reply?.address == "/error" && reply?.arguments.last == .string(reason),
                    "\(address): \(String(describing: reply))")
        }
        surface.sendBundle([])
        #expect(await surface.next() == OSCMessage("/error", [.string(""), .string("empty bundle: nothing to do")]))
        surface.transport.receive([], from: SurfaceHarness.client)
        #expect(await surface.next()?.address == "/error", "an empty datagram got no answer")
    }
}
