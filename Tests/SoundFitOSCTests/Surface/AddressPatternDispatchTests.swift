import OSCCore
import SoundFitEngine
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// Address patterns on the surface: a query answers every matching parameter, a set goes to
/// every match that accepts the value in one audio cycle, commands are never selected by a
/// pattern, and every pattern that selects nothing is answered with `/error`.
@Suite struct AddressPatternDispatchTests {
    private static func terminalStates(_ surface: SurfaceHarness, count: Int) async -> [String: OSCMessage] {
        var terminal: [String: OSCMessage] = [:]
        while terminal.count < count, let report = await surface.next() {
            guard report.address == "/state", case .string(let address) = report.arguments[0],
                  case .string(let name) = report.arguments[1], ["applied", "failed", "superseded"].contains(name)
            else { continue }
            terminal[address] = report
        }
        return terminal
    }

    @Test func aQueryPatternAnswersEveryMatchingParameterInModelOrder() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/filter/*"))
        var answers: [OSCMessage] = []
        for _ in 0..<5 { answers += [await surface.next()].compactMap { $0 } }
        #expect(answers == [
            OSCMessage("/filter/enabled", [.int32(0)]), OSCMessage("/filter/type", [.string("lowpass")]),
            OSCMessage("/filter/cutoff", [.float(1000)]), OSCMessage("/filter/q", [.float(0.7071)]),
            OSCMessage("/filter/gain", [.float(0)]),
        ])
        // Fader forms are addresses too: one more part, so `*` alone never reaches them.
        surface.send(OSCMessage("/filter/{cutoff,q}/normalized"))
        let cutoff = await surface.next(), q = await surface.next()
        #expect(cutoff?.address == "/filter/cutoff/normalized" && q?.address == "/filter/q/normalized",
                "\(String(describing: cutoff)) \(String(describing: q))")
        #expect(await surface.everything(within: .milliseconds(200)).isEmpty)
    }

    @Test func aSetPatternAppliesToEveryMatchThatAcceptsTheValueInOneAudioCycle() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        // Cutoff accepts 5000 Hz, Q (0.1…18) does not: Q is left alone, without an /error.
        surface.send(OSCMessage("/filter/{cutoff,q}", [.float(5000), .int32(9)]))
        let cutoff = await Self.terminalStates(surface, count: 1)
        #expect(cutoff["/filter/cutoff"]?.arguments == [.string("/filter/cutoff"), .string("applied"), .float(5000), .int32(9)])
        #expect(surface.runtime.engine.settings.filter.q == 0.7071)
        #expect(await surface.everything(within: .milliseconds(300)).allSatisfy { $0.address == "/state" })

        surface.send(OSCMessage("/[fr]*/enabled", [.int32(1)]))
        let enabled = await Self.terminalStates(surface, count: 2)
        #expect(enabled.keys.sorted() == ["/filter/enabled", "/ringmod/enabled"])
        #expect(enabled.values.allSatisfy { $0.arguments[1] == .string("applied") }, "\(enabled)")
        let settings = surface.runtime.engine.settings
        #expect(settings.filter.isEnabled && settings.ringModulator.isEnabled)
        let mailbox = surface.runtime.engine.mailbox
        let cycles = [EngineSlot.filterEnabled, .ringModulatorEnabled].map { mailbox.acknowledgement(index: $0.rawValue).cycle }
        #expect(Set(cycles).count == 1, "the pattern's sets landed in cycles \(cycles)")
    }

    @Test func aMatchThatRefusesTheValueNowIsLeftAlone() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        // No hearing profile: /processing/enabled refuses 1 (can_enable is 0); the other three take it.
        surface.send(OSCMessage("/*/enabled", [.int32(1)]))
        let enabled = await Self.terminalStates(surface, count: 3)
        #expect(enabled.keys.sorted() == ["/filter/enabled", "/output/enabled", "/ringmod/enabled"], "\(enabled)")
        #expect(await surface.everything(within: .milliseconds(300)).allSatisfy { $0.address == "/state" })
        surface.send(OSCMessage("/processing/enabled"))
        #expect(await surface.next() == OSCMessage("/processing/enabled", [.int32(0)]))
    }

    @Test func aPatternThatSelectsNothingIsAnsweredWithAnError() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let cases: [(OSCMessage, String)] = [
            (OSCMessage("/nothing/*"), "no parameter matches the address pattern /nothing/*"),
            (OSCMessage("/filter/[cq"), "malformed address pattern: '[' at position 8 is never closed"),
            (OSCMessage("/filter/{cutoff", [.float(1)]), "malformed address pattern: '{' at position 8 is never closed"),
            (OSCMessage("/patch/*", [.int32(0)]), "address patterns select parameters only: send a command to its own "
                + "address (/patch/list, /patch/load, /patch/save, /patch/delete, /patch/current)"),
            (OSCMessage("/session/{activate,deactivate}"), "address patterns select parameters only: send a command to "
                + "its own address (/session/activate, /session/deactivate)"),
        ]
        for (message, reason) in cases {
            surface.send(message)
            #expect(await surface.next() == OSCMessage("/error", [.string(message.address), .string(reason)]))
        }
        // A set that no match accepts names every match's reason.
        surface.send(OSCMessage("/filter/{q,gain}", [.float(5000)]))
        let refused = await surface.next()
        #expect(refused?.arguments.first == .string("/filter/{q,gain}"))
        if case .string(let reason) = refused?.arguments.last {
            #expect(reason.hasPrefix("no parameter matching /filter/{q,gain} accepts the value: /filter/q: 5000.0 is out of range"),
                    "\(reason)")
            #expect(reason.contains("/filter/gain: 5000.0 is out of range"), "\(reason)")
        }
        #expect(surface.runtime.engine.settings.filter.q == 0.7071 && surface.runtime.engine.settings.filter.gain == 0)
    }

    @Test func listTakesAnOptionalPatternForASubtree() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        func listed(_ arguments: [OSCArgument]) async -> [OSCMessage] {
            surface.send(OSCMessage("/list", arguments))
            return await surface.messages(through: "/list/end")
        }
        let filter = await listed([.string("/filter")])
        #expect(filter.dropLast().compactMap { $0.arguments.first } == ParameterModel.all
            .filter { $0.address.hasPrefix("/filter/") }.map { .string($0.address) })
        #expect(filter.last == OSCMessage("/list/end", [.int32(5)]))
        let enabled = await listed([.string("/*/enabled")])
        #expect(enabled.dropLast().compactMap { $0.arguments.first } == [
            .string("/processing/enabled"), .string("/filter/enabled"), .string("/ringmod/enabled"), .string("/output/enabled"),
        ])
        #expect(await listed([]).count == ParameterModel.all.count + 1)
        let refusals: [([OSCArgument], String)] = [
            ([.string("/nothing")], "no parameter matches /nothing"),
            ([.string("/filter/[")], "malformed address pattern: '[' at position 8 is never closed"),
            ([.int32(1)], "/list takes one optional string, an address pattern; got ,i"),
            ([.string("/filter"), .string("/ringmod")], "/list takes one optional string, an address pattern; got 2 arguments"),
        ]
        for (arguments, reason) in refusals {
            surface.send(OSCMessage("/list", arguments))
            #expect(await surface.next() == OSCMessage("/error", [.string("/list"), .string(reason)]))
        }
    }

    /// What routing costs per message: a literal address is looked up as before, a pattern is
    /// matched against every parameter. Printed, not asserted (timing goals live in benchmarks).
    @Test func routingCostOfLiteralAddressesAndPatterns() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let sender = OSCSender(peer: SurfaceHarness.client, transport: surface.transport)
        let clock = ContinuousClock()
        let rounds = 20_000
        for message in [OSCMessage("/filter/cutoff", [.float(2500)]), OSCMessage("/filter/{cutoff,q}", [.float(2500)]),
                        OSCMessage("/*/*", [.float(0.5)])] {
            var routed = 0
            let elapsed = clock.measure {
                for _ in 0..<rounds {
                    if case .rejected = surface.surface.route(message, from: sender) { continue }
                    routed += 1
                }
            }
            #expect(routed == rounds)
            print("measured: routing \(message.address) = \(elapsed / rounds) per message")
        }
    }
}
