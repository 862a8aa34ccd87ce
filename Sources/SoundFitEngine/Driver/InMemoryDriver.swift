import SoundFitDSP
import SoundFitModel

/// Drives a `RealtimeRenderer` over arrays instead of JACK ports, block by block, the way the
/// JACK process callback does. For tests, offline rendering and benchmarks. Not real-time safe
/// itself (it allocates its output arrays).
///
/// Its clock is the frames it rendered: frame `n` is at `time(ofFrame: n)` on the engine clock,
/// `startTime` plus `n` sample periods, so scheduled changes land on exact frames. A driver that
/// stands in for an audio thread rendering in real time (`followsEngineClock`) starts each
/// cycle at the engine clock's now instead.
public struct InMemoryDriver: ~Copyable {
    public private(set) var renderer: RealtimeRenderer
    public let blockSize: Int
    public let sampleRate: Double
    /// The engine time of the first frame.
    public let startTime: EngineTime
    /// Frames rendered so far.
    public private(set) var framesRendered = 0
    /// Each cycle starts at `EngineTime.now` (and lasts its frames), not at its frame's time.
    public let followsEngineClock: Bool
    private let channelCount: Int

    public init(engine: AudioEngine, sampleRate: Double = 48000, blockSize: Int = 256, channelCount: Int = 2,
                startTime: EngineTime = .now, followsEngineClock: Bool = false) {
        self.followsEngineClock = followsEngineClock
        self.blockSize = blockSize
        self.sampleRate = sampleRate
        self.startTime = startTime
        self.channelCount = channelCount
        renderer = engine.makeRenderer(spec: ProcessingSpec(
            sampleRate: sampleRate, maximumFrameCount: 1024, channelCount: channelCount))
    }

    /// The engine time of frame `frame` (rounded down to the microsecond).
    public func time(ofFrame frame: Int) -> EngineTime {
        EngineTime(microseconds: startTime.microseconds + UInt64(Double(frame) * 1e6 / sampleRate))
    }

    /// Clears filter states, resets the ring modulator's phase and jumps every ramp to its target
    /// (`RealtimeRenderer.resetChain`), so what is rendered next does not depend on how long
    /// the driver ran before.
    public mutating func resetChain() {
        renderer.resetChain()
    }

    /// Renders one block of silence (to let the renderer take parameter changes). Returns the cycle.
    @discardableResult
    public mutating func renderSilentCycle() -> UInt64 {
        let silence = [[Float]](repeating: [Float](repeating: 0, count: blockSize), count: channelCount)
        return render(silence).cycles.last ?? 0
    }

    /// Processes `inputs` (one array per channel, equal lengths) in blocks of `blockSize`.
    /// `beforeBlock` runs before each block with the block index (to change parameters mid-stream).
    public mutating func render(_ inputs: [[Float]], beforeBlock: (Int) -> Void = { _ in })
        -> (outputs: [[Float]], cycles: [UInt64])
    {
        precondition(inputs.count == channelCount, "one input array per channel")
        let frameCount = inputs.first?.count ?? 0
        var outputs = [[Float]](repeating: [Float](repeating: 0, count: frameCount), count: channelCount)
        var cycles: [UInt64] = []
        let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channelCount)
        let inputStorage = UnsafeMutablePointer<Float>.allocate(capacity: max(1, frameCount * channelCount))
        let outputStorage = UnsafeMutablePointer<Float>.allocate(capacity: max(1, frameCount * channelCount))
        defer {
            inputPointers.deallocate()
            outputPointers.deallocate()
            inputStorage.deallocate()
            outputStorage.deallocate()
        }
        for channel in 0..<channelCount {
            (inputStorage + channel * frameCount).update(from: inputs[channel], count: frameCount)
        }
        var start = 0
        var block = 0
        while start < frameCount || (frameCount == 0 && block == 0) {
            let count = min(blockSize, frameCount - start)
            for channel in 0..<channelCount {
                inputPointers[channel] = UnsafePointer(inputStorage + channel * frameCount + start)
                outputPointers[channel] = outputStorage + channel * frameCount + start
            }
            beforeBlock(block)
            let cycleStart = followsEngineClock ? EngineTime.now : self.time(ofFrame: framesRendered)
            let time = CycleTime(start: cycleStart, end: cycleStart.advanced(bySeconds: Double(count) / sampleRate))
            cycles.append(renderer.render(inputs: inputPointers, outputs: outputPointers, frameCount: count, time: time))
            framesRendered += count
            start += count
            block += 1
            if frameCount == 0 { break }
        }
        for channel in 0..<channelCount {
            outputs[channel] = Array(UnsafeBufferPointer(start: outputStorage + channel * frameCount, count: frameCount))
        }
        return (outputs, cycles)
    }
}
