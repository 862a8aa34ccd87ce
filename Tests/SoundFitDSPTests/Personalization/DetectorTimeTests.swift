import Foundation
import SoundFitDSP
import SoundFitModel
import SoundFitTestSupport
import Testing

/// The preset's attack and release are the times ANSI S3.22 measures: a tone at 2 kHz
/// stepping 55 → 90 → 55 dB SPL, output within 3 dB (attack) / 4 dB (release) of its new steady
/// value. In process, on the chain (the render test in SoundFitIntegrationTests repeats it
/// through the binary).
@Suite("Level detector time constants")
struct DetectorTimeTests {
    static let fs = Personalization.fs

    /// Seconds from `step` until the one-period RMS envelope of `samples` stays within
    /// `tolerance` dB of its mean over the 100 ms before `end`.
    static func settling(_ samples: [Float], step: Int, end: Int, tolerance: Double) -> Double {
        let window = 24   // one period of 2 kHz at 48 kHz
        var envelope = [Double](repeating: 0, count: samples.count), sum = 0.0
        for n in 0..<samples.count {
            sum += Double(samples[n]) * Double(samples[n])
            if n >= window { sum -= Double(samples[n - window]) * Double(samples[n - window]) }
            if n >= window - 1 { envelope[n - window / 2] = 10 * log10(max(sum / Double(window), 1e-30)) }
        }
        let tail = (end - 4800)..<end
        let steady = tail.reduce(0) { $0 + envelope[$1] } / Double(tail.count)
        let last = (step..<end).last { abs(envelope[$0] - steady) > tolerance } ?? step
        return Double(last + 1 - step) / fs
    }

    static func measure(_ preset: PresetPayload) throws -> (attack: Double, release: Double) {
        var chain = try Personalization.chain(preset)
        defer { Personalization.finish(&chain) }
        let parts = [(55.0, 48000), (90.0, 28800), (55.0, 48000)]
        var signal: [Float] = []
        for (level, count) in parts {
            let amplitude = Personalization.amplitude(level: level)
            let start = signal.count
            for n in 0..<count { signal.append(Float(amplitude * sin(2 * Double.pi * 2000 * Double(start + n) / fs))) }
        }
        let out = runChain(&chain, [signal, signal]).channel(0, frames: 0..<signal.count)
        let attack = settling(out, step: 48000, end: 76800, tolerance: 3)
        let release = settling(out, step: 76800, end: signal.count - 24, tolerance: 4)
        return (attack, release)
    }

    @Test("attack 5 ms and release 50 ms measure within 20 % at 2 kHz", arguments: [2, 3, 4])
    func statedTimes(techLevel: Int) throws {
        let preset = Personalization.n3Preset(techLevel: techLevel)
        let (attack, release) = try Self.measure(preset)
        print("tech level \(techLevel): attack \(attack * 1000) ms, release \(release * 1000) ms")
        #expect(abs(attack - 0.005) <= 0.001)
        #expect(abs(release - 0.050) <= 0.010)
    }

    @Test("other stated times: attack 4 / 10 ms, release 30 / 150 ms at tech level 4")
    func otherTimes() throws {
        for (attackMs, releaseMs) in [(4.0, 30.0), (10.0, 150.0)] {
            var preset = Personalization.n3Preset(techLevel: 4)
            for i in preset.left.indices {
                preset.left[i].attack = attackMs
                preset.left[i].release = releaseMs
                preset.right[i].attack = attackMs
                preset.right[i].release = releaseMs
            }
            let (attack, release) = try Self.measure(preset)
            print("stated \(attackMs)/\(releaseMs) ms: attack \(attack * 1000) ms, release \(release * 1000) ms")
            #expect(abs(attack * 1000 - attackMs) <= 0.2 * attackMs)
            #expect(abs(release * 1000 - releaseMs) <= 0.2 * releaseMs)
        }
    }
}
