import Foundation
import SoundFitDSP
import SoundFitEngine
import SoundFitModel

/// The renderer's per-cycle cost around the chain: looking for scheduled
/// changes every cycle, and rendering a cycle in two parts for a change scheduled mid-cycle,
/// each against its baseline in the same run. Rows of the kernel table (ns per sample-channel).
///
/// Each block is timed alone (two clock reads per block, the same in every row) so that the
/// control side's work between blocks — publishing or scheduling the next change — is not
/// timed, as it does not run on the audio thread.
extension KernelBenchmarks {
    /// Times `render(block index, inputs, outputs, frames)` block by block after `prepare(block
    /// index)` (untimed), over 16-block passes of noise. Returns the median ns per sample-channel.
    func measureBlocks(channels: Int, block: Int, prepare: (Int) -> Void,
                       _ render: (Int, UnsafePointer<UnsafePointer<Float>>, UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) -> Double {
        let passBlocks = 16, passFrames = block * passBlocks
        let input = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        input.fillNoise(seed: 4242)
        let output = PlanarBuffers(channelCount: channels, frameCount: passFrames)
        var blockIndex = 0
        func pass() -> UInt64 {
            var total: UInt64 = 0
            for index in 0..<passBlocks {
                prepare(blockIndex)
                let inputs = input.inputs(offset: index * block), outputs = output.channels(offset: index * block)
                let start = monotonicNanoseconds()
                render(blockIndex, inputs, outputs, block)
                total += monotonicNanoseconds() - start
                blockIndex += 1
            }
            return total
        }
        for _ in 0..<5 { _ = pass() }
        let perPass = max(1, Int(runSeconds * 1e9 / Double(max(pass(), 1))))
        var results: [Double] = []
        for _ in 0..<runs {
            var total: UInt64 = 0
            for _ in 0..<perPass { total += pass() }
            results.append(Double(total) / Double(perPass * passFrames * channels))
        }
        blackHole(output.checksum)
        return median(results)
    }

    /// The four renderer rows for one grid cell: all stages on, without and with the schedule
    /// check, and with a gain change every block, published (applied at the cycle's start) or
    /// scheduled mid-block (the cycle rendered in two parts).
    func rendererRows(channels: Int, block: Int, add: (String, Double) -> Void) {
        let spec = ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: block, channelCount: channels)
        let start = EngineTime(microseconds: 1_000_000_000)
        func time(ofFrame frame: Int) -> EngineTime {
            EngineTime(microseconds: start.microseconds + UInt64(Double(frame) * 1e6 / sampleRate))
        }
        func cycleTime(_ blockIndex: Int) -> CycleTime {
            CycleTime(start: time(ofFrame: blockIndex * block), end: time(ofFrame: (blockIndex + 1) * block))
        }
        let gains: [ParameterValue] = [.float(-6), .float(-7)]

        let plainEngine = AudioEngine(settings: Self.chainSettings)
        var plain = plainEngine.makeRenderer(spec: spec)
        add("RealtimeRenderer, all stages", measureBlocks(channels: channels, block: block, prepare: { _ in }) { _, inputs, outputs, n in
            plain.render(inputs: inputs, outputs: outputs, frameCount: n)
        })

        let checkedEngine = AudioEngine(settings: Self.chainSettings)
        var checked = checkedEngine.makeRenderer(spec: spec)
        add("RealtimeRenderer, all stages, schedule checked", measureBlocks(channels: channels, block: block, prepare: { _ in }) { index, inputs, outputs, n in
            checked.render(inputs: inputs, outputs: outputs, frameCount: n, time: cycleTime(index))
        })

        let publishedEngine = AudioEngine(settings: Self.chainSettings)
        var published = publishedEngine.makeRenderer(spec: spec)
        add("RealtimeRenderer, gain published every block", measureBlocks(channels: channels, block: block, prepare: { index in
            _ = publishedEngine.submit(validated: [(.outputGain, gains[index & 1])])
        }) { index, inputs, outputs, n in
            published.render(inputs: inputs, outputs: outputs, frameCount: n, time: cycleTime(index))
        })

        let scheduledEngine = AudioEngine(settings: Self.chainSettings)
        var scheduled = scheduledEngine.makeRenderer(spec: spec)
        add("RealtimeRenderer, gain scheduled mid-block every block", measureBlocks(channels: channels, block: block, prepare: { index in
            _ = try? scheduledEngine.submit(validated: [(.outputGain, gains[index & 1])], at: time(ofFrame: index * block + block / 2))
        }) { index, inputs, outputs, n in
            scheduled.render(inputs: inputs, outputs: outputs, frameCount: n, time: cycleTime(index))
        })
    }

    /// The ratios that answer the question: what the schedule check and a mid-cycle split cost.
    static func rendererRatios(_ rows: [Row], columns: [[Int]]) -> String {
        func value(_ kernel: String, _ column: [Int]) -> Double? {
            rows.first { $0.kernel == kernel && $0.channels == column[0] && $0.block == column[1] }?.nanosecondsPerSampleChannel
        }
        var out = ""
        for (name, numerator, denominator) in [
            ("schedule checked / all stages", "RealtimeRenderer, all stages, schedule checked", "RealtimeRenderer, all stages"),
            ("scheduled mid-block / published", "RealtimeRenderer, gain scheduled mid-block every block",
             "RealtimeRenderer, gain published every block"),
        ] {
            out += "| RealtimeRenderer, \(name) | " + columns.map { c in
                guard let n = value(numerator, c), let d = value(denominator, c) else { return "-" }
                return String(format: "%.2f", n / d)
            }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
