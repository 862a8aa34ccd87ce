import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// The hearing test's tone: level, purity, click-free ramps, and silence everywhere else.
@Suite struct ToneStimulusTests {
    let sampleRate = 48000.0

    /// Renders `tone` in 256-frame blocks into `channels` channels; returns every channel.
    private func render(_ tone: ToneStimulus.Tone, channels: Int = 4, extraFrames: Int = 4800) -> [[Float]] {
        var stimulus = ToneStimulus(sampleRate: sampleRate)
        stimulus.start(tone)
        let total = Int(tone.seconds * sampleRate) + extraFrames
        let buffers = ChannelBuffers(channelCount: channels, frameCount: total)
        var offset = 0
        while offset < total {
            let frames = min(256, total - offset)
            stimulus.render(buffers.outputs(offset: offset), channelCount: channels, frameCount: frames)
            offset += frames
        }
        #expect(!stimulus.isPlaying)
        return (0..<channels).map { buffers.channel($0) }
    }

    @Test("Level within ±0.01 dB of the requested amplitude; THD ≤ −60 dB", arguments: [250.0, 1000, 4000, 8000])
    func levelAndPurity(frequency: Double) {
        let amplitude = 0.01
        let out = render(ToneStimulus.Tone(frequency: frequency, amplitude: amplitude, ear: .left, seconds: 1))
        let steady = Array(out[0][4800..<43200])
        let measured = Measurement.toneAmplitude(steady, frequency: frequency, sampleRate: sampleRate)
        #expect(abs(Measurement.decibels(measured / amplitude)) <= 0.01, "\(frequency) Hz: \(measured)")
        let (power, binWidth) = Spectrum.powerSpectrum(steady, sampleRate: sampleRate)
        var tone = 0.0, rest = 0.0
        for (k, p) in power.enumerated() {
            if abs(Double(k) * binWidth - frequency) <= 50 { tone += p } else { rest += p }
        }
        let thd = 10 * log10(rest / tone)
        report("tone \(Int(frequency)) Hz THD+N: \(String(format: "%.1f", thd)) dB")
        #expect(thd <= -60)
    }

    @Test("Onset and offset: energy above 2 × the tone during the ramps ≤ −60 dB re the tone",
          arguments: [(250.0, false), (1000, false), (4000, false), (1000, true)])
    func rampsDoNotClick(frequency: Double, pulsed: Bool) {
        let out = render(ToneStimulus.Tone(frequency: frequency, amplitude: 0.5, ear: .right, seconds: 1, isPulsed: pulsed))
        let right = out[1]
        let ramp = Int(ToneStimulus.rampSeconds * sampleRate)
        // Onset and offset windows: the ramps with a little of what surrounds them.
        let last = right.lastIndex { $0 != 0 } ?? 0
        for (name, window) in [("onset", Array(right[0..<(2 * ramp)])), ("offset", Array(right[(last - 2 * ramp)...(last + ramp)]))] {
            let (power, binWidth) = Spectrum.powerSpectrum(window, sampleRate: sampleRate)
            var tone = 0.0, splatter = 0.0
            for (k, p) in power.enumerated() {
                let f = Double(k) * binWidth
                if f > 2 * frequency { splatter += p } else { tone += p }
            }
            let level = 10 * log10(splatter / tone)
            report("\(Int(frequency)) Hz \(pulsed ? "pulsed " : "")\(name): above \(Int(2 * frequency)) Hz \(String(format: "%.1f", level)) dB")
            #expect(level <= -60, "\(frequency) Hz \(name)")
        }
    }

    @Test func onlyTheTestedEarsChannelsCarryTheTone() {
        let out = render(ToneStimulus.Tone(frequency: 1000, amplitude: 0.5, ear: .right, seconds: 0.5), channels: 5)
        for channel in [0, 2, 4] { #expect(out[channel].allSatisfy { $0 == 0 }, "channel \(channel + 1) (left ear)") }
        for channel in [1, 3] { #expect(out[channel].contains { $0 != 0 }, "channel \(channel + 1) (right ear)") }
        // Mono carries the left ear; a right-ear tone goes to its only channel too.
        let mono = render(ToneStimulus.Tone(frequency: 1000, amplitude: 0.5, ear: .right, seconds: 0.5), channels: 1)
        #expect(mono[0].contains { $0 != 0 })
    }

    @Test func pulsedToneIsThreePulses() {
        let out = render(ToneStimulus.Tone(frequency: 1000, amplitude: 0.5, ear: .left, seconds: 1, isPulsed: true))
        var runs = 0, inRun = false
        for block in stride(from: 0, to: out[0].count, by: 480) {
            let loud = out[0][block..<min(block + 480, out[0].count)].contains { abs($0) > 0.25 }
            if loud && !inRun { runs += 1 }
            inRun = loud
        }
        #expect(runs == 3)
    }

    @Test func stopSilencesAtOnce() {
        var stimulus = ToneStimulus(sampleRate: sampleRate)
        stimulus.start(ToneStimulus.Tone(frequency: 1000, amplitude: 0.5, ear: .left, seconds: 1))
        let buffers = ChannelBuffers(channelCount: 2, frameCount: 256)
        stimulus.render(buffers.outputs, channelCount: 2, frameCount: 256)
        #expect(buffers.channel(0).contains { $0 != 0 })
        stimulus.stop()
        stimulus.render(buffers.outputs, channelCount: 2, frameCount: 256)
        #expect(buffers.channel(0).allSatisfy { $0 == 0 })
    }
}
