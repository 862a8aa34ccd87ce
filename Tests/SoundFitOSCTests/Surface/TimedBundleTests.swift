import OSCCore
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// Bundles with a future timetag through the surface (in-memory transport, real runtime, a
/// stand-in audio thread on the engine clock): what the sender is told, and when.
@Suite struct TimedBundleTests {
    @Test func aTimedBundleReportsApplyingAtOnceAndAppliedAtItsMoment() async throws {
        try await withSurface { surface in
            let start = EngineTime.now
            surface.sendBundle([OSCMessage("/output/gain", [.float(-6)]), OSCMessage("/filter/cutoff/normalized", [.float(0.5)])],
                               timetag: OSCTimetag.ahead(0.3))
            let applying = try #require(await surface.next())
            #expect(applying.address == "/state" && applying.arguments[1] == .string("applying"), "\(applying)")
            var reports = [applying]
            while reports.count(where: { $0.arguments[1] == .string("applied") }) < 2, let message = await surface.next() {
                if message.address == "/state" { reports.append(message) }
            }
            #expect(EngineTime.now.seconds(since: start) >= 0.29, "applied before its moment")
            let applied = reports.filter { $0.arguments[1] == .string("applied") }.compactMap { $0.arguments.first }
            #expect(Set(applied.map { "\($0)" }) == ["string(\"/output/gain\")", "string(\"/filter/cutoff\")"], "\(reports)")
        }
    }

    @Test func refusedTimedBundlesChangeNothing() async throws {
        try await withSurface { surface in
            for (messages, timetag, hint) in [
                ([OSCMessage("/output/gain", [.float(-6)])], OSCTimetag.ahead(11), "horizon"),
                ([OSCMessage("/output/gain", [.float(-6)]), OSCMessage("/ping")], OSCTimetag.ahead(1), "/ping is a command"),
                ([OSCMessage("/output/gain", [.float(-6)]), OSCMessage("/filter/cutoff")], OSCTimetag.ahead(1), "query"),
                ([OSCMessage("/processing/intensity", [.float(0.7)])], OSCTimetag.ahead(1), "session parameter"),
            ] {
                surface.sendBundle(messages, timetag: timetag)
                let error = try #require(await surface.next())
                guard case .string(let reason) = error.arguments.last else {
                    Issue.record("no reason: \(error)")
                    continue
                }
                #expect(error.address == "/error" && reason.contains(hint), "\(error)")
            }
            #expect(await surface.everything(within: .milliseconds(200)).isEmpty)
            surface.send(OSCMessage("/output/gain"))
            #expect(await surface.next() == OSCMessage("/output/gain", [.float(0)]))
        }
    }

    @Test func aPastTimetagAppliesAtOnce() async throws {
        try await withSurface { surface in
            surface.sendBundle([OSCMessage("/output/gain", [.float(-3)])], timetag: OSCTimetag.ahead(-5))
            let states = await surface.states()
            #expect(states.last == OSCMessage("/state", [.string("/output/gain"), .string("applied"), .float(-3)]))
        }
    }
}
