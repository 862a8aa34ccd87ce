import Foundation
import SoundFitDSP
import SoundFitEngine
import SoundFitModel
import SoundFitTestSupport
import Testing

/// Changes scheduled for a moment (OSC bundles with a future timetag) take effect at the frame
/// of the cycle that contains it, measured on the in-memory driver, whose clock is its frames.
@Suite struct ScheduledChangeTests {
    static let start = EngineTime(microseconds: 10_000_000)

    /// Deterministic noise in ±0.5 (no zero samples that would hide a gain change).
    static func noise(_ count: Int) -> [Float] {
        var state: UInt32 = 12345
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state >> 8) - (1 << 23)) / Float(1 << 24) + 0.001
        }
    }

    /// The first index at which `a` and `b` differ.
    static func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
        a.indices.first { a[$0] != b[$0] }
    }

    /// Renders `input` through a fresh engine (`settings`) in blocks of `blockSize`, with
    /// `changes` scheduled for the moment of frame `frame` (nothing scheduled when nil).
    static func render(_ input: [Float], settings: ChainSettings = ChainSettings(), blockSize: Int = 256,
                       scheduling changes: [(EngineSlot, ParameterValue)], atFrame frame: Int?) throws -> [Float] {
        let engine = AudioEngine(settings: settings)
        var driver = InMemoryDriver(engine: engine, blockSize: blockSize, channelCount: 1, startTime: start)
        if let frame {
            _ = try engine.submit(validated: changes, at: driver.time(ofFrame: frame))
        }
        return driver.render([input]).outputs[0]
    }

    @Test("An output gain step starts exactly at its scheduled frame", arguments: [1, 255, 256, 1000, 1023, 4095])
    func gainStepLandsOnItsFrame(frame: Int) throws {
        let input = Self.noise(4096)
        let plain = try Self.render(input, scheduling: [], atFrame: nil)
        let scheduled = try Self.render(input, scheduling: [(.outputGain, .float(-6))], atFrame: frame)
        #expect(plain == input, "0 dB is exact unity")
        #expect(Self.firstDifference(plain, scheduled) == frame)
        #expect(Array(scheduled[..<frame]) == Array(plain[..<frame]))
    }

    @Test("A filter cutoff change starts its ramp exactly at its scheduled frame, in any block size",
          arguments: [(64, 700), (256, 1000), (1024, 333), (100, 2999)])
    func filterChangeLandsOnItsFrame(blockSize: Int, frame: Int) throws {
        var settings = ChainSettings()
        settings.filter.isEnabled = true
        let input = Self.noise(4096)
        let plain = try Self.render(input, settings: settings, blockSize: blockSize, scheduling: [], atFrame: nil)
        let scheduled = try Self.render(input, settings: settings, blockSize: blockSize,
                                        scheduling: [(.filterCutoff, .float(4000))], atFrame: frame)
        #expect(Self.firstDifference(plain, scheduled) == frame)
    }

    @Test("Two batches due in one cycle apply in time order, each at its own frame")
    func twoBatchesInOneCycle() throws {
        let input = Self.noise(1024)
        var settings = ChainSettings()
        settings.filter = FilterSettings(isEnabled: true, type: .allpass, cutoff: 1000)
        func render(_ changes: [(frame: Int, change: (EngineSlot, ParameterValue))]) throws -> [Float] {
            let engine = AudioEngine(settings: settings)
            var driver = InMemoryDriver(engine: engine, blockSize: 1024, channelCount: 1, startTime: Self.start)
            for (frame, change) in changes {
                _ = try engine.submit(validated: [change], at: driver.time(ofFrame: frame))
            }
            return driver.render([input]).outputs[0]
        }
        let plain = try render([])
        // Scheduled later-first: the schedule is not kept in time order.
        let both = try render([(600, (.filterCutoff, .float(5000))), (200, (.outputGain, .float(-6)))])
        let gainOnly = try render([(200, (.outputGain, .float(-6)))])
        #expect(Self.firstDifference(plain, both) == 200)
        #expect(Self.firstDifference(gainOnly, both) == 600)
    }

    @Test("A change published after a scheduled one supersedes it (arrival order): the scheduled value never sounds")
    func laterArrivalSupersedes() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1)
        let input = [Float](repeating: 0.5, count: 256)
        let scheduled = try engine.submit(validated: [(.outputGain, .float(-6))], at: driver.time(ofFrame: 2000))
        _ = driver.render([input])
        _ = engine.submit(validated: [(.outputGain, .float(-20))])
        var last: [Float] = []
        for _ in 0..<16 { last = driver.render([input]).outputs[0] }  // past frame 2000 and every ramp
        await #expect(throws: EngineError.superseded) {
            try await engine.waitUntilApplied(scheduled, timeout: .seconds(2))
        }
        #expect(last.allSatisfy { abs($0 - 0.05) < 1e-6 }, "−20 dB of 0.5 expected, got \(last[0])")
    }

    @Test("A scheduled change that arrived later than a published one applies at its frame after it")
    func laterScheduledChangeApplies() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1)
        let input = [Float](repeating: 0.5, count: 256)
        _ = driver.render([input])
        let published = engine.submit(validated: [(.outputGain, .float(-20))])
        let scheduled = try engine.submit(validated: [(.outputGain, .float(-6))], at: driver.time(ofFrame: 2000))
        var last: [Float] = []
        for _ in 0..<16 { last = driver.render([input]).outputs[0] }
        try await engine.waitUntilApplied(published, timeout: .seconds(2))
        try await engine.waitUntilApplied(scheduled, timeout: .seconds(2))
        let expected = Float(0.5 * pow(10, -6.0 / 20))
        #expect(last.allSatisfy { abs($0 - expected) < 1e-6 }, "−6 dB of 0.5 expected, got \(last[0])")
    }

    @Test("A new renderer (after a JACK restart) starts from a scheduled value the previous one applied")
    func newRendererKeepsAnAppliedScheduledValue() throws {
        let engine = AudioEngine()
        let input = [Float](repeating: 0.5, count: 2048)
        do {
            var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1, startTime: Self.start)
            _ = try engine.submit(validated: [(.outputGain, .float(-6))], at: driver.time(ofFrame: 100))
            _ = driver.render([input])
        }
        var next = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1, startTime: Self.start)
        let output = next.render([input]).outputs[0]
        let expected = Float(0.5 * pow(10, -6.0 / 20))
        #expect(output.allSatisfy { abs($0 - expected) < 1e-6 }, "starts at \(output[0]), expected \(expected)")
    }

    @Test("A cancelled scheduled change never takes effect")
    func cancelledNeverApplies() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1, startTime: Self.start)
        let submission = try engine.submit(validated: [(.outputGain, .float(-6))], at: driver.time(ofFrame: 1000))
        #expect(engine.cancel(submission))
        let input = Self.noise(4096)
        #expect(driver.render([input]).outputs[0] == input)
        #expect(!engine.cancel(submission), "cancelled once only")
    }

    @Test("A moment already past applies at the start of the next cycle")
    func pastMomentAppliesAtTheNextCycle() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1, startTime: Self.start)
        let input = Self.noise(1024)
        _ = driver.render([Array(input[..<512])])
        _ = try engine.submit(validated: [(.outputGain, .float(-6))], at: driver.time(ofFrame: 100))
        let output = driver.render([Array(input[512...])]).outputs[0]
        #expect(output[0] != input[512], "applied at the first frame of the next cycle")
    }

    @Test("The schedule is bounded: a full one refuses, room returns once batches applied")
    func scheduleIsBounded() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1, startTime: Self.start)
        for index in 0..<ScheduledChanges.capacity {
            _ = try engine.submit(validated: [(.outputGain, .float(Float(-index % 60)))], at: driver.time(ofFrame: 10 + index))
        }
        #expect(!engine.canSchedule)
        #expect(throws: EngineError.scheduleFull(capacity: ScheduledChanges.capacity)) {
            _ = try engine.submit(validated: [(.outputGain, .float(-1))], at: driver.time(ofFrame: 100))
        }
        driver.renderSilentCycle()
        #expect(engine.canSchedule)
    }
}
