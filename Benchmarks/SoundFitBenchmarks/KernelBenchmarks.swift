import CReferenceBiquad
import Foundation
import SoundFitDSP

/// Offline throughput of the DSP kernels on arrays, in ns per sample-channel.
///
/// Each measurement processes a working area of `passFrames` frames per channel (16 blocks,
/// resident in L2 like a JACK client's port buffers) in calls of `block` frames; the area is
/// refilled from pristine noise between passes (not timed) so in-place kernels always see fresh
/// input. One run lasts about `runSeconds`; the reported value is the median over `runs` runs.
struct KernelBenchmarks {
    var runs = 7
    var runSeconds = 0.08
    var channelCounts = [2, 8]
    var blockSizes = [64, 256]
    let sampleRate = 48000.0

    struct Row {
        var kernel: String
        var channels: Int
        var block: Int
        var nanosecondsPerSampleChannel: Double
    }

    /// Times `process(buffers, frames)` over in-place data. Returns the median ns per sample-channel.
    func measureInPlace(channels: Int, block: Int,
                        _ process: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) -> Double {
        let passFrames = block * 16
        let pristine = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        pristine.fillNoise(seed: 12345)
        let work = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        func pass() -> UInt64 {
            work.copy(from: pristine)
            let start = monotonicNanoseconds()
            var offset = 0
            while offset < passFrames {
                process(work.channels(offset: offset), block)
                offset += block
            }
            return monotonicNanoseconds() - start
        }
        return timeRuns(samplesPerPass: Double(passFrames * channels), pass)
    }

    /// Times a chain (out of place, input buffers stay pristine).
    func measureOutOfPlace(channels: Int, block: Int,
                           _ process: (UnsafePointer<UnsafePointer<Float>>, UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) -> Double {
        let passFrames = block * 16
        let input = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        input.fillNoise(seed: 999)
        let output = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        // Separate pointer arrays for inputs and outputs.
        let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { inputPointers.deallocate(); outputPointers.deallocate() }
        let baseInputs = input.inputs(offset: 0), baseOutputs = output.channels(offset: 0)
        let inBase = (0..<channels).map { baseInputs[$0] }, outBase = (0..<channels).map { baseOutputs[$0] }
        func pass() -> UInt64 {
            let start = monotonicNanoseconds()
            var offset = 0
            while offset < passFrames {
                for c in 0..<channels {
                    inputPointers[c] = inBase[c] + offset
                    outputPointers[c] = outBase[c] + offset
                }
                process(UnsafePointer(inputPointers), UnsafePointer(outputPointers), block)
                offset += block
            }
            return monotonicNanoseconds() - start
        }
        let result = timeRuns(samplesPerPass: Double(passFrames * channels), pass)
        blackHole(output.checksum)
        return result
    }

    private func timeRuns(samplesPerPass: Double, _ pass: () -> UInt64) -> Double {
        // Warm up and size a run to about `runSeconds`.
        var warm: UInt64 = 0
        for _ in 0..<5 { warm = min(warm == 0 ? .max : warm, pass()) }
        let passesPerRun = max(3, Int(runSeconds * 1e9 / Double(max(warm, 1))))
        var results: [Double] = []
        for _ in 0..<runs {
            var total: UInt64 = 0
            for _ in 0..<passesPerRun { total += pass() }
            results.append(Double(total) / (Double(passesPerRun) * samplesPerPass))
        }
        return median(results)
    }

    static let filterSettings = FilterSettings(isEnabled: true, type: .peak, cutoff: 1000, q: 1.5, gain: 6)
    static let ringSettings = RingModulatorSettings(isEnabled: true, frequency: 22, mix: 0.7)
    static let gainSettings = OutputGainSettings(isEnabled: true, gain: -6)
    static var chainSettings: ChainSettings {
        ChainSettings(filter: filterSettings, ringModulator: ringSettings, outputGain: gainSettings)
    }

    /// The table row of a biquad measurement on `path` (the baseline keeps the old name).
    static func biquadRow(_ name: String, _ path: SIMDPath) -> String {
        path == .baseline ? name : "\(name), \(path.rawValue)"
    }

    func run() -> [Row] {
        var rows: [Row] = []
        for channels in channelCounts {
            for block in blockSizes {
                let spec = ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: block, channelCount: channels)
                func add(_ name: String, _ value: Double) {
                    rows.append(Row(kernel: name, channels: channels, block: block, nanosecondsPerSampleChannel: value))
                }

                // C reference biquads (same design, float32 coefficients).
                let design = BiquadCoefficients.rbj(type: .peak, cutoff: 1000, q: 1.5, gain: 6, sampleRate: sampleRate)
                var coefficients = soundfit_ref_biquad_coefficients(
                    b0: Float(design.b0), b1: Float(design.b1), b2: Float(design.b2), a1: Float(design.a1), a2: Float(design.a2))
                let tdf2States = UnsafeMutablePointer<soundfit_ref_biquad_tdf2_state>.allocate(capacity: channels)
                tdf2States.initialize(repeating: soundfit_ref_biquad_tdf2_state(), count: channels)
                add("C biquad TDF-II (-O3)", measureInPlace(channels: channels, block: block) { buffers, n in
                    soundfit_ref_biquad_tdf2_process(&coefficients, tdf2States, buffers, Int32(channels), Int32(n))
                })
                tdf2States.deallocate()
                let df1States = UnsafeMutablePointer<soundfit_ref_biquad_df1_state>.allocate(capacity: channels)
                df1States.initialize(repeating: soundfit_ref_biquad_df1_state(), count: channels)
                add("C biquad DF-I (-O3)", measureInPlace(channels: channels, block: block) { buffers, n in
                    soundfit_ref_biquad_df1_process(&coefficients, df1States, buffers, Int32(channels), Int32(n))
                })
                df1States.deallocate()

                // Both builds of the biquad's per-sample loops (`SIMDPath`) that this CPU runs, in one run.
                for path in SIMDPath.allCases where path.isAvailable {
                    var filter = BiquadFilter(spec: spec, settings: Self.filterSettings, simdPath: path)
                    add(Self.biquadRow("BiquadFilter", path), measureInPlace(channels: channels, block: block) { buffers, n in
                        filter.process(buffers, frameCount: n)
                    })

                    // Worst case: a new cutoff every block keeps the coefficients moving all the time.
                    var moving = BiquadFilter(spec: spec, settings: Self.filterSettings, simdPath: path)
                    var flip = false
                    add(Self.biquadRow("BiquadFilter, cutoff moving", path), measureInPlace(channels: channels, block: block) { buffers, n in
                        flip.toggle()
                        var s = Self.filterSettings
                        s.cutoff = flip ? 1200 : 900
                        moving.apply(s)
                        moving.process(buffers, frameCount: n)
                    })
                }

                var ring = RingModulator(spec: spec, settings: Self.ringSettings)
                add("RingModulator", measureInPlace(channels: channels, block: block) { buffers, n in
                    ring.process(buffers, frameCount: n)
                })

                var gain = OutputGain(spec: spec, settings: Self.gainSettings)
                add("OutputGain (-6 dB)", measureInPlace(channels: channels, block: block) { buffers, n in
                    gain.process(buffers, frameCount: n)
                })

                // The output limit per ear: below its ceiling (the scan only) and limiting noise
                // 14 dB over it (every sample through the hold window and the gain).
                var idle = OutputLimiter(ceiling: 1, sampleRate: sampleRate)
                add("OutputLimiter, below the ceiling", measureInPlace(channels: channels, block: block) { buffers, n in
                    idle.process(buffers, channelCount: channels, frameCount: n)
                })
                var limiting = OutputLimiter(ceiling: 0.1, sampleRate: sampleRate)
                add("OutputLimiter, limiting", measureInPlace(channels: channels, block: block) { buffers, n in
                    limiting.process(buffers, channelCount: channels, frameCount: n)
                })

                var chain = ProcessingChain(spec: spec, settings: Self.chainSettings)
                add("ProcessingChain, all stages", measureOutOfPlace(channels: channels, block: block) { inputs, outputs, n in
                    chain.process(inputs: inputs, outputs: outputs, frameCount: n)
                })

                var bypassed = ProcessingChain(spec: spec)
                add("ProcessingChain, bypassed (copy)", measureOutOfPlace(channels: channels, block: block) { inputs, outputs, n in
                    bypassed.process(inputs: inputs, outputs: outputs, frameCount: n)
                })

                rendererRows(channels: channels, block: block, add: add)
            }
        }
        return rows
    }

    /// A markdown table: one row per kernel, one column per (channels, block), plus Swift/C.
    static func table(_ rows: [Row]) -> String {
        let columns = Array(Set(rows.map { [$0.channels, $0.block] })).sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }
        var kernels: [String] = []
        for row in rows where !kernels.contains(row.kernel) { kernels.append(row.kernel) }
        func value(_ kernel: String, _ column: [Int]) -> Double? {
            rows.first { $0.kernel == kernel && $0.channels == column[0] && $0.block == column[1] }?.nanosecondsPerSampleChannel
        }
        var out = "| ns per sample-channel | " + columns.map { "\($0[0]) ch, \($0[1]) frames" }.joined(separator: " | ") + " |\n"
        out += "| --- |" + String(repeating: " ---: |", count: columns.count) + "\n"
        for kernel in kernels {
            out += "| \(kernel) | " + columns.map { c in value(kernel, c).map { String(format: "%.3f", $0) } ?? "-" }.joined(separator: " | ") + " |\n"
        }
        for name in ["BiquadFilter", biquadRow("BiquadFilter", .avx2FMA)] where kernels.contains(name) {
            for reference in ["C biquad TDF-II (-O3)", "C biquad DF-I (-O3)"] where kernels.contains(reference) {
                out += "| \(name) / \(reference.replacingOccurrences(of: " (-O3)", with: "")) | " + columns.map { c in
                    guard let s = value(name, c), let r = value(reference, c) else { return "-" }
                    return String(format: "%.2f", s / r)
                }.joined(separator: " | ") + " |\n"
            }
        }
        for name in ["BiquadFilter", "BiquadFilter, cutoff moving"] {
            let wideName = biquadRow(name, .avx2FMA)
            guard kernels.contains(wideName) else { continue }
            out += "| \(wideName) / baseline | " + columns.map { c in
                guard let wide = value(wideName, c), let base = value(name, c) else { return "-" }
                return String(format: "%.2f", wide / base)
            }.joined(separator: " | ") + " |\n"
        }
        out += rendererRatios(rows, columns: columns)
        return out
    }
}

@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
