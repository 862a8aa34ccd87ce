import Foundation
import SoundFitDSP
import SoundFitHearing
import SoundFitModel
import Testing

/// The derived maximum output's promise, measured: 75 dB SPL speech (speech-shaped noise, Byrne
/// 1994 LTASS) passes the per-band maxima and the ear's broadband limit with its insertion gain
/// unchanged; louder speech is held. Through the processing chain, with and without the limits.
@Suite struct MaximumOutputSpeechTests {
    static let fs = 48000.0

    /// Insertion gain per band of `preset` for speech at `level` dB SPL, the ear's ceiling at its
    /// derived maximum (or none).
    private func insertionGains(_ payload: PresetPayload, level: Double, limited: Bool) throws -> [Double] {
        var bands = payload.left
        if !limited { for index in bands.indices { bands[index].outputLimit = 140 } }
        var preset = payload
        preset.left = bands
        preset.right = bands
        let spec = ProcessingSpec(sampleRate: Self.fs, maximumFrameCount: 256, channelCount: 1)
        var chain = ProcessingChain(
            spec: spec, settings: ChainSettings(personalization: PersonalizationSettings(isEnabled: true, intensity: 1)),
            personalizationTechLevel: preset.techLevel.value)
        let handle = Unmanaged.passRetained(try PreparedPersonalization(preset: preset, sampleRate: Self.fs,
                                                                         techLevel: preset.techLevel.value))
        guard case .installed(retired: nil) = chain.installPersonalization(handle) else { fatalError("not installed") }
        defer { chain.removePersonalization()?.release() }
        if limited {
            let ear = MaximumOutput.earMaximum(bands: payload.left)
            chain.setOutputCeiling(Float(pow(10, (ear - payload.calibration) / 20)))
        }
        let input = SpeechShapedNoise.samples(level: level, fullScaleSPL: payload.calibration, sampleRate: Self.fs,
                                              seconds: 2, seed: 7)
        var output = input
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                var offset = 0
                while offset < input.count {
                    let count = min(256, input.count - offset)
                    var inputs = [UnsafePointer(source.baseAddress! + offset)]
                    var outputs = [destination.baseAddress! + offset]
                    chain.process(inputs: &inputs, outputs: &outputs, frameCount: count)
                    offset += count
                }
            }
        }
        // Skip the first half second: the detectors settle.
        let skip = Int(Self.fs / 2)
        return BandPowerAnalysis(sampleRate: Self.fs).insertionGains(input: input[skip...], output: output[skip...],
                                                                     centres: bands.map(\.centre))
    }

    @Test("75 dB SPL speech: the derived limits change no band's insertion gain by more than 0.2 dB (N1, N3, N6, S1, tech level 3); 85 dB SPL speech is held for N1")
    func speechPeaksPass() throws {
        let techLevel = try TechLevel(3)
        for standard in StandardAudiogram.all where ["N1", "N3", "N6", "S1"].contains(standard.name) {
            let profile = try HearingProfile(left: standard.audiogram, right: standard.audiogram)
            let payload = PresetGenerator.preset(.default, profile: profile, techLevel: techLevel)
            var line = "\(standard.name):"
            for level in [75.0, 85] {
                let free = try insertionGains(payload, level: level, limited: false)
                let limited = try insertionGains(payload, level: level, limited: true)
                let change = zip(free, limited).map { $1 - $0 }
                line += String(format: " %.0f dB SPL speech, largest change %.2f dB;", level, change.map(abs).max()!)
                if level == 75 {
                    #expect(change.allSatisfy { abs($0) <= 0.2 }, "\(standard.name) at 75 dB SPL: \(change)")
                } else if standard.name == "N1" {
                    // Control: louder speech than the rule lets through is held, so a limit that
                    // did not act would fail here.
                    #expect(change.contains { $0 < -0.3 }, "N1 at 85 dB SPL: \(change)")
                }
            }
            print("[measure] " + line)
        }
    }
}
