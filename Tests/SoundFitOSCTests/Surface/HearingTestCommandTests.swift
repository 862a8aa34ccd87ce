import OSCCore
@testable import SoundFitOSC
import Testing

/// `/test/*` and the `/profile/audiogram` query, on the in-memory surface (the flow itself,
/// through JACK, is in the integration tests).
@Suite struct HearingTestCommandTests {
    @Test func settingsAreReportedSetAndRefusedOutOfRange() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/test/status"))
        #expect(await surface.next() == OSCMessage("/test/state", [.string("idle")]))

        surface.send(OSCMessage("/test/config"))
        let defaults = try #require(await surface.next())
        #expect(defaults.address == "/test/config" && defaults.arguments.count == 17, "\(defaults)")
        #expect(defaults.arguments.last == .string("current") && OSCCommandTable.isReply(defaults), "\(defaults)")
        #expect(defaults.arguments[1] == .float(1) && defaults.arguments[11] == .string("steady")
                    && defaults.arguments[13] == .float(90) && defaults.arguments[15] == .string("TDH-39"), "\(defaults)")

        surface.send(OSCMessage("/test/config", [.string("tone_seconds"), .float(0.2), .string("stimulus"), .string("pulsed")]))
        let set = try #require(await surface.next())
        #expect(set.arguments[1] == .float(0.2) && set.arguments[11] == .string("pulsed"), "\(set)")

        for (arguments, hint) in [([OSCArgument.string("tone_seconds"), .float(0.1)], "tone_seconds"),
                                  ([.string("window_start"), .float(2)], "window_start"),
                                  ([.string("loudness"), .float(1)], "unknown key"),
                                  ([.string("stimulus"), .string("warble")], "stimulus"),
                                  ([.string("max_db_hl")], "pairs")] {
            surface.send(OSCMessage("/test/config", arguments))
            let reply = try #require(await surface.next())
            #expect(reply.address == "/error" && "\(reply)".contains(hint), "\(arguments): \(reply)")
        }

        surface.send(OSCMessage("/test/earphone", [.string("mine"), .float(1000), .float(5), .float(4000), .float(8)]))
        let table = try #require(await surface.next())
        #expect(table == OSCMessage("/test/earphone", [.string("mine"), .float(1000), .float(5), .float(4000), .float(8),
                                                      .string("dB SPL")]))
        #expect(OSCCommandTable.isReply(table))
        surface.send(OSCMessage("/test/earphone", [.string("bad"), .float(1000)]))
        #expect(await surface.next()?.address == "/error")
    }

    @Test func commandsWithoutATestAreRefusedAndTheProfileIsQueried() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        for address in ["/test/heard", "/test/pause", "/test/resume", "/test/cancel"] {
            surface.send(OSCMessage(address))
            let reply = try #require(await surface.next())
            #expect(reply.address == "/error" && reply.arguments.first == .string(address), "\(reply)")
        }
        surface.send(OSCMessage("/test/start", [.string("middle")]))
        #expect(await surface.next()?.address == "/error")
        surface.send(OSCMessage("/test/start", [.string("left"), .float(1200)]))
        #expect(await surface.next()?.address == "/error")

        surface.send(OSCMessage("/profile/audiogram"))
        #expect(await surface.next()?.address == "/error")
        surface.send(OSCMessage("/profile/audiogram", [.string("left"), .float(500), .float(20), .float(1000), .float(25),
                                                       .float(2000), .float(40), .float(4000), .float(55)]))
        #expect(await surface.next()?.address == "/profile/presets")
        surface.send(OSCMessage("/profile/audiogram"))
        let left = try #require(await surface.next())
        let right = try #require(await surface.next())
        #expect(left == OSCMessage("/profile/audiogram", [.string("left"), .float(500), .float(20), .float(1000), .float(25),
                                                         .float(2000), .float(40), .float(4000), .float(55), .string("dB HL")]))
        // An ear without its own audiogram reports the other's (as the profile uses it).
        #expect(right.arguments.first == .string("right") && Array(right.arguments.dropFirst()) == Array(left.arguments.dropFirst()))
        // The answer ends in its unit, which no submission does: another SoundFit that receives it
        // (a forged source) drops it instead of taking this profile as its own.
        #expect(OSCCommandTable.isReply(left) && OSCCommandTable.isReply(right))
        #expect(!OSCCommandTable.isReply(OSCMessage("/profile/audiogram", Array(left.arguments.dropLast()))))
    }
}
