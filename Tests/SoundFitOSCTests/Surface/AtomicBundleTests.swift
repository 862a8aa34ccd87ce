import OSCCore
import OSCTestSupport
import SoundFitEngine
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// A bundle is validated whole before anything in it is performed: one rejected element, and
/// nothing in it is applied or performed; the one `/error` names the element.
@Suite struct AtomicBundleTests {
    /// Every message `surface` sends within a moment, after the bundle.
    private static func answers(_ surface: SurfaceHarness) async -> [OSCMessage] {
        await surface.everything(to: SurfaceHarness.client, within: .milliseconds(400))
    }

    @Test func oneInvalidSetStopsTheWholeBundle() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.sendBundle([
            OSCMessage("/filter/cutoff", [.float(3000)]),
            OSCMessage("/filter/type", [.string("bandpass")]),
            OSCMessage("/filter/q", [.float(999)]),
        ])
        #expect(await Self.answers(surface) == [OSCMessage("/error", [
            .string("/filter/q"),
            .string("bundle element 3: /filter/q: 999.0 is out of range 0.1…18.0; nothing in the bundle was applied"),
        ])])
        let settings = surface.runtime.engine.settings
        #expect(settings.filter.cutoff == 1000 && settings.filter.type == .lowpass)
        surface.send(OSCMessage("/filter/cutoff"))
        #expect(await surface.next() == OSCMessage("/filter/cutoff", [.float(1000)]))
    }

    @Test func anInvalidElementStopsTheBundlesCommandsToo() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let invalid: [(OSCMessage, String)] = [
            (OSCMessage("/filter/type", [.string("bogus")]), "/filter/type: unknown value 'bogus'"),
            (OSCMessage("/config/timeout", [.float(-1)]), "timeout must be 0.01…600 s, got -1.0"),
            (OSCMessage("/session/activate", [.string("fine_tuning"), .int32(9)]), "tech level"),
            (OSCMessage("/processing/can_enable", [.int32(1)]), "read-only"),
            // Refused now rather than invalid: checked before anything is performed all the same.
            (OSCMessage("/processing/enabled", [.int32(1)]), "(can_enable is 0)"),
            (OSCMessage("/processing/preset", [.string("up")]), "no hearing profile yet"),
            (OSCMessage("/nothing"), "unknown address /nothing"),
            (OSCMessage("/filter/[q"), "malformed address pattern"),
        ]
        for (element, reason) in invalid {
            surface.sendBundle([
                OSCMessage("/ping", [.int32(1)]),
                OSCMessage("/config/delivery", [.string("discrete")]),
                OSCMessage("/session/deactivate"),
                OSCMessage("/filter/enabled", [.int32(1)]),
                element,
            ])
            let answers = await Self.answers(surface)
            #expect(answers.count == 1 && answers.first?.address == "/error", "\(element): \(answers)")
            if case .string(let text) = answers.first?.arguments.last {
                #expect(answers.first?.arguments.first == .string(element.address))
                #expect(text.hasPrefix("bundle element 5: ") && text.contains(reason)
                        && text.hasSuffix("; nothing in the bundle was applied"), "\(text)")
            }
            #expect(surface.runtime.controller.session != nil, "the session was deactivated by a rejected bundle")
            #expect(surface.runtime.config.deliveryStyle == .continuous)
            #expect(!surface.runtime.engine.settings.filter.isEnabled)
        }
    }

    @Test func elementsOfNestedBundlesAreCountedInOrder() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let inner = OSCWirePackets.bundle([
            OSCCodec.encode(OSCMessage("/filter/cutoff", [.float(500)])),
            OSCCodec.encode(OSCMessage("/output/gain", [.float(99)])),
        ])
        surface.transport.receive(OSCWirePackets.bundle([OSCCodec.encode(OSCMessage("/filter/q", [.float(2)])), inner]),
                                  from: SurfaceHarness.client)
        let answers = await Self.answers(surface)
        #expect(answers.count == 1 && answers.first?.arguments.first == .string("/output/gain"), "\(answers)")
        if case .string(let text) = answers.first?.arguments.last { #expect(text.hasPrefix("bundle element 3: "), "\(text)") }
        #expect(surface.runtime.engine.settings.filter.cutoff == 1000 && surface.runtime.engine.settings.filter.q == 0.7071)
    }

    @Test func aValidBundleStillLandsInOneAudioCycle() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.sendBundle([
            OSCMessage("/filter/cutoff", [.float(3000)]),
            OSCMessage("/{output,ringmod}/enabled", [.int32(1)]),
            OSCMessage("/error", [.string("/x"), .string("a reply in a bundle is skipped, not rejected")]),
        ])
        var terminal: Set<String> = []
        while terminal.count < 3, let report = await surface.next() {
            guard report.address == "/state", case .string(let address) = report.arguments[0],
                  report.arguments[1] == .string("applied") else { continue }
            terminal.insert(address)
        }
        #expect(terminal == ["/filter/cutoff", "/output/enabled", "/ringmod/enabled"])
        let mailbox = surface.runtime.engine.mailbox
        let cycles = [EngineSlot.filterCutoff, .ringModulatorEnabled].map { mailbox.acknowledgement(index: $0.rawValue).cycle }
        #expect(Set(cycles).count == 1, "the bundle landed in cycles \(cycles)")
    }
}
