import Foundation
import SoundFitDSP
import SoundFitEngine
import SoundFitModel
import Testing

@Suite("Meters: levels measured by the renderer, read and reset by the control side")
struct MeterTests {
    static func sine(_ frequency: Double, amplitude: Float, count: Int) -> [Float] {
        (0..<count).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / 48000)) }
    }

    @Test("off until someone listens; then peak and RMS in dBFS per channel, input before the chain, output after")
    func levels() throws {
        let engine = AudioEngine(settings: ChainSettings(outputGain: OutputGainSettings(gain: -6)))
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        let tone = Self.sine(1000, amplitude: 0.5, count: 48000)
        let quiet = Self.sine(250, amplitude: 0.01, count: 48000)
        _ = driver.render([tone, quiet])
        #expect(engine.takeMeterReading() == nil, "metered without a listener")
        engine.startMetering()
        #expect(engine.takeMeterReading() == nil)   // opens a window
        _ = driver.render([tone, quiet])
        let reading = try #require(engine.takeMeterReading())
        #expect(reading.frames == 48000)
        let first = reading.channels[0], second = reading.channels[1]
        #expect(abs(first.inputPeak - 20 * log10(0.5)) < 0.01)
        #expect(abs(first.inputRMS - (20 * log10(0.5) - 3.0103)) < 0.01)
        #expect(abs(first.outputPeak - (20 * log10(0.5) - 6)) < 0.05)
        #expect(abs(first.outputRMS - (20 * log10(0.5) - 3.0103 - 6)) < 0.05)
        #expect(abs(second.inputPeak + 40) < 0.01 && abs(second.outputRMS - (-40 - 3.0103 - 6)) < 0.05)
        #expect(first.bandGains.isEmpty && first.bandReductions.isEmpty)
        // A new window starts afresh: silence reads the floor.
        _ = driver.render([[Float](repeating: 0, count: 4096), [Float](repeating: 0, count: 4096)])
        let silent = try #require(engine.takeMeterReading())
        #expect(silent.channels.allSatisfy { $0.inputPeak == MeterReading.floor && $0.outputRMS == MeterReading.floor })
        engine.stopMetering()
        _ = driver.render([tone, quiet])
        #expect(engine.takeMeterReading() == nil, "metered after the last listener left")
    }

    @Test("merging windows keeps the larger peak and the energy mean")
    func merging() {
        let loud = MeterReading(channels: [.init(inputPeak: -10, inputRMS: -13, outputPeak: -10, outputRMS: -13,
                                                 bandGains: [1], bandReductions: [4])], frames: 100)
        let quiet = MeterReading(channels: [.init(inputPeak: -40, inputRMS: MeterReading.floor, outputPeak: -40,
                                                  outputRMS: MeterReading.floor, bandGains: [2], bandReductions: [1])],
                                 frames: 100)
        let merged = loud.merged(with: quiet)
        #expect(merged.frames == 200 && merged.channels[0].inputPeak == -10)
        #expect(abs(merged.channels[0].inputRMS - (-13 - 3.0103)) < 0.01)
        #expect(merged.channels[0].bandGains == [2] && merged.channels[0].bandReductions == [4])
    }
}
