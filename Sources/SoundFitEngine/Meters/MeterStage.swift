import SoundFitDSP
import Synchronization

/// The renderer's meters: while someone listens (`MeterMailbox.listeners` > 0) it measures each
/// channel's input before the chain and output after it — peak and sum of squares over the
/// metering window — and the personalization's band gains and largest gain reduction, and
/// publishes them every cycle. Idle (one atomic load per cycle) when nobody listens.
///
/// Created off the audio thread (it allocates); `begin`, `measureInputs` and `finish` are
/// real-time safe (plain loops on preallocated memory and atomic stores) and run on the audio
/// thread only.
struct MeterStage: ~Copyable {
    private let mailbox: MeterMailbox
    private let channelCount: Int
    /// The window the accumulators belong to.
    private var window: UInt32 = 0
    private var frames: UInt64 = 0
    /// Per channel: input peak, output peak.
    private let peaks: UnsafeMutablePointer<Float>
    /// Per channel: input and output sums of squares.
    private let squares: UnsafeMutablePointer<Double>
    /// Per channel and band: the largest reduction of the window.
    private let reductions: UnsafeMutablePointer<Float>

    init(channelCount: Int, mailbox: MeterMailbox) {
        self.mailbox = mailbox
        self.channelCount = min(channelCount, MeterMailbox.maximumChannels)
        peaks = .allocate(capacity: 2 * MeterMailbox.maximumChannels)
        peaks.initialize(repeating: 0, count: 2 * MeterMailbox.maximumChannels)
        squares = .allocate(capacity: 2 * MeterMailbox.maximumChannels)
        squares.initialize(repeating: 0, count: 2 * MeterMailbox.maximumChannels)
        reductions = .allocate(capacity: MeterMailbox.maximumChannels * MeterMailbox.maximumBands)
        reductions.initialize(repeating: 0, count: MeterMailbox.maximumChannels * MeterMailbox.maximumBands)
    }

    deinit {
        peaks.deallocate()
        squares.deallocate()
        reductions.deallocate()
    }

    /// Whether to meter this cycle; starts the accumulators afresh when the control side opened
    /// a new window. Real-time safe.
    @inline(__always)
    mutating func begin() -> Bool {
        guard mailbox.listeners.pointee.load(ordering: .relaxed) > 0 else { return false }
        let requested = mailbox.window.pointee.load(ordering: .acquiring)
        if requested != window {
            window = requested
            frames = 0
            peaks.update(repeating: 0, count: 2 * MeterMailbox.maximumChannels)
            squares.update(repeating: 0, count: 2 * MeterMailbox.maximumChannels)
            reductions.update(repeating: 0, count: MeterMailbox.maximumChannels * MeterMailbox.maximumBands)
        }
        return true
    }

    /// Measures the cycle's input (before the chain runs). Real-time safe.
    @inline(__always)
    func measureInputs(_ inputs: UnsafePointer<UnsafePointer<Float>>, frameCount: Int) {
        for channel in 0..<channelCount {
            measure(inputs[channel], frameCount: frameCount, into: 2 &* channel)
        }
    }

    /// Measures the cycle's output and the personalization's bands, then publishes the block.
    /// Real-time safe.
    @inline(__always)
    mutating func finish(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int,
                         chain: borrowing ProcessingChain) {
        for channel in 0..<channelCount {
            measure(UnsafePointer(outputs[channel]), frameCount: frameCount, into: 2 &* channel &+ 1)
        }
        frames &+= UInt64(frameCount)
        let bands = min(chain.meteredBandCount, MeterMailbox.maximumBands)
        let block = mailbox.block
        let version = mailbox.version.pointee.load(ordering: .relaxed)
        mailbox.version.pointee.store(version &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        block[0].store(window, ordering: .relaxed)
        block[1].store(UInt32(truncatingIfNeeded: min(frames, UInt64(UInt32.max))), ordering: .relaxed)
        block[2].store(UInt32(truncatingIfNeeded: channelCount), ordering: .relaxed)
        block[3].store(UInt32(truncatingIfNeeded: bands), ordering: .relaxed)
        let count = Double(max(frames, 1))
        for channel in 0..<channelCount {
            let base = MeterMailbox.headerWords &+ channel &* MeterMailbox.channelWords
            block[base].store(peaks[2 &* channel].bitPattern, ordering: .relaxed)
            block[base &+ 1].store(Float(squares[2 &* channel] / count).bitPattern, ordering: .relaxed)
            block[base &+ 2].store(peaks[2 &* channel &+ 1].bitPattern, ordering: .relaxed)
            block[base &+ 3].store(Float(squares[2 &* channel &+ 1] / count).bitPattern, ordering: .relaxed)
            for band in 0..<bands {
                let meter = chain.personalizationBandMeter(channel: channel, band: band)
                let slot = channel &* MeterMailbox.maximumBands &+ band
                if meter.reduction > reductions[slot] { reductions[slot] = meter.reduction }
                block[base &+ 4 &+ 2 &* band].store(meter.gain.bitPattern, ordering: .relaxed)
                block[base &+ 5 &+ 2 &* band].store(reductions[slot].bitPattern, ordering: .relaxed)
            }
        }
        mailbox.version.pointee.store(version &+ 2, ordering: .releasing)
    }

    /// Adds `frameCount` samples to the peak and the sum of squares at `index`.
    @inline(__always)
    private func measure(_ samples: UnsafePointer<Float>, frameCount: Int, into index: Int) {
        var peak = peaks[index]
        var sum: Float = 0
        for frame in 0..<frameCount {
            let x = samples[frame]
            let magnitude = abs(x)
            if magnitude > peak { peak = magnitude }
            sum += x * x
        }
        peaks[index] = peak
        squares[index] += Double(sum)
    }
}
