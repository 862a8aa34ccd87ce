import SoundFitDSP
import SoundFitTestSupport

/// Prints a measured number so the test log documents what was measured.
func report(_ message: String) {
    print("[measure] \(message)")
}

extension FilterType {
    /// The matching type of the independent cookbook reference.
    var cookbookKind: CookbookBiquad.Kind {
        switch self {
        case .lowpass: .lpf
        case .highpass: .hpf
        case .bandpass: .bpf
        case .notch: .notch
        case .peak: .peakingEQ
        case .lowshelf: .lowShelf
        case .highshelf: .highShelf
        case .allpass: .apf
        }
    }
}

extension FilterSettings {
    /// The independent float64 reference for these settings at `sampleRate`.
    func cookbook(sampleRate: Double) -> CookbookBiquad {
        CookbookBiquad(kind: type.cookbookKind, f0: Double(cutoff), q: Double(q), dbGain: Double(gain), fs: sampleRate)
    }
}

/// The settings grid of the response and precision tests: every type at cutoffs 50, 1000 and
/// 10000 Hz and Q 0.5, 0.7071 and 4; the peak and shelf types at gains −12 and +12 dB.
func filterSettingsGrid(cutoffs: [Float] = [50, 1000, 10000], qs: [Float] = [0.5, 0.7071, 4]) -> [FilterSettings] {
    var grid: [FilterSettings] = []
    for type in FilterType.allCases {
        for cutoff in cutoffs {
            for q in qs {
                for gain: Float in type.usesGain ? [-12, 12] : [0] {
                    grid.append(FilterSettings(isEnabled: true, type: type, cutoff: cutoff, q: q, gain: gain))
                }
            }
        }
    }
    return grid
}

/// Measures a kernel's magnitude response with a steady multi-tone: tones at whole-Hz
/// frequencies (exact DFT bins of a one-second window), 0.5 s to settle, then each tone's output
/// amplitude over input amplitude (Goertzel over exactly one second).
struct ResponseProbe {
    let sampleRate: Double
    let frequencies: [Double]
    let settleCount: Int
    let windowCount: Int
    let input: [Float]
    let inputAmplitudes: [Double]

    init(sampleRate: Double, frequencies: [Double], seed: UInt64 = 1) {
        precondition(sampleRate == sampleRate.rounded(), "whole-Hz bins need an integer sample rate")
        self.sampleRate = sampleRate
        self.frequencies = frequencies
        settleCount = Int(sampleRate) / 2
        windowCount = Int(sampleRate)
        input = SignalGenerator.multiTone(frequencies: frequencies, amplitude: 0.04, sampleRate: sampleRate,
                                          count: settleCount + windowCount, seed: seed)
        let window = input[settleCount...]
        inputAmplitudes = frequencies.map { Spectrum.toneAmplitude(window, frequency: $0, sampleRate: sampleRate) }
    }

    var frameCount: Int { settleCount + windowCount }

    /// Response in dB at each frequency of `output` (the processed `input`).
    func responseDecibels(of output: [Float]) -> [Double] {
        let window = output[settleCount...]
        return zip(frequencies, inputAmplitudes).map { f, inAmplitude in
            20 * Foundation.log10(Spectrum.toneAmplitude(window, frequency: f, sampleRate: sampleRate) / inAmplitude)
        }
    }

    /// Runs `input` through a filter (on `channelCount` identical channels, in 512-frame
    /// blocks) and returns the response of channel 0 and whether every channel came out identical.
    func measure(_ filter: inout BiquadFilter, channelCount: Int = 1) -> (decibels: [Double], channelsIdentical: Bool) {
        let buffers = ChannelBuffers(Array(repeating: input, count: channelCount))
        var offset = 0
        while offset < frameCount {
            let n = min(512, frameCount - offset)
            filter.process(buffers.outputs(offset: offset), frameCount: n)
            offset += n
        }
        let first = buffers.channel(0)
        let identical = (1..<channelCount).allSatisfy { buffers.channel($0) == first }
        return (responseDecibels(of: first), identical)
    }
}

import Foundation

/// Log-spaced whole-Hz test frequencies from 20 Hz to 20 kHz (below 0.49·fs), plus points
/// around each cutoff.
func responseFrequencies(sampleRate: Double, cutoffs: [Float] = [50, 1000, 10000]) -> [Double] {
    var set = Set<Int>()
    let count = 24
    for i in 0..<count {
        set.insert(Int((20 * pow(1000, Double(i) / Double(count - 1))).rounded()))
    }
    for c in cutoffs {
        for factor in [0.8, 0.95, 1.0, 1.05, 1.25] { set.insert(Int((Double(c) * factor).rounded())) }
    }
    return set.filter { $0 >= 20 && Double($0) <= min(20000, 0.49 * sampleRate) }.sorted().map(Double.init)
}

/// Index of the first sample whose bit pattern differs (nil when identical, including length).
func firstBitDifference(_ a: [Float], _ b: [Float]) -> Int? {
    guard a.count == b.count else { return min(a.count, b.count) }
    return a.indices.first { a[$0].bitPattern != b[$0].bitPattern }
}

extension Array where Element == Float {
    /// True when both arrays hold the same bits (NaN payloads and signed zeros included).
    func isBitIdentical(to other: [Float]) -> Bool { firstBitDifference(self, other) == nil }
}

/// Runs `chain` over `input` in calls of `block` frames, out of place (or in place).
func runChain(_ chain: inout ProcessingChain, _ input: [[Float]], block: Int = 256, inPlace: Bool = false) -> ChannelBuffers {
    let source = ChannelBuffers(input)
    let destination = inPlace ? source : ChannelBuffers(channelCount: input.count, frameCount: input[0].count)
    var offset = 0
    while offset < source.frameCount {
        let n = min(block, source.frameCount - offset)
        chain.process(inputs: source.inputs(offset: offset), outputs: destination.outputs(offset: offset), frameCount: n)
        offset += n
    }
    return destination
}
