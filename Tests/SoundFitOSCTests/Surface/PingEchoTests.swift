import OSCCore
import OSCTestSupport
@testable import SoundFitOSC
import Testing

/// `/ping` echoes every argument type SoundFit decodes; every other address refuses the types
/// it does not take with a type error that names it.
@Suite struct PingEchoTests {
    @Test func pingEchoesEveryArgumentType() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let arguments = OSCWirePackets.everyType.map(\.0)
        surface.send(OSCMessage("/ping", arguments))
        #expect(await surface.next() == OSCMessage("/pong", arguments))
    }

    @Test func pingRefusesAnArrayItCannotEcho() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        // `/ping ,i[ii]`, written by hand: the codec does not write arrays.
        let array = Array("/ping".utf8) + [0, 0, 0] + Array(",i[ii]".utf8) + [0, 0] + [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]
        surface.transport.receive(array, from: SurfaceHarness.client)
        let reply = await surface.next()
        #expect(reply?.address == "/error" && reply?.arguments.first == .string("/ping"), "\(String(describing: reply))")
    }

    @Test(arguments: [OSCArgument.blob([1]), .timetag(1), .char(65), .midi(port: 0, status: 0x90, data1: 1, data2: 2),
                      .rgba(red: 1, green: 2, blue: 3, alpha: 4)])
    func otherAddressesAnswerATypeErrorNamingThemselves(_ argument: OSCArgument) async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        for address in ["/filter/cutoff", "/filter/cutoff/normalized", "/processing/preset", "/patch/load", "/config/timeout"] {
            surface.send(OSCMessage(address, [argument]))
            let reply = await surface.next()
            #expect(reply?.address == "/error" && reply?.arguments.first == .string(address), "\(address): \(String(describing: reply))")
        }
        #expect(surface.runtime.engine.settings.filter.cutoff == 1000)
    }
}
