/// Non-interleaved multi-channel audio owned by a test, with the channel-pointer arrays the
/// kernels' `process` methods take (like JACK port buffers). Not thread-safe; test use only.
public final class ChannelBuffers {
    public let channelCount: Int
    public let frameCount: Int
    private let storage: UnsafeMutablePointer<Float>
    private let mutablePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let constPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let offsetMutablePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let offsetConstPointers: UnsafeMutablePointer<UnsafePointer<Float>>

    /// `channelCount` channels of `frameCount` zeros.
    public init(channelCount: Int, frameCount: Int) {
        precondition(channelCount > 0 && frameCount >= 0)
        self.channelCount = channelCount
        self.frameCount = frameCount
        storage = .allocate(capacity: max(1, channelCount * frameCount))
        storage.initialize(repeating: 0, count: max(1, channelCount * frameCount))
        mutablePointers = .allocate(capacity: channelCount)
        constPointers = .allocate(capacity: channelCount)
        offsetMutablePointers = .allocate(capacity: channelCount)
        offsetConstPointers = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            mutablePointers[c] = storage + c * frameCount
            constPointers[c] = UnsafePointer(storage + c * frameCount)
            offsetMutablePointers[c] = mutablePointers[c]
            offsetConstPointers[c] = constPointers[c]
        }
    }

    /// Buffers holding `channels` (all the same length).
    public convenience init(_ channels: [[Float]]) {
        precondition(!channels.isEmpty)
        self.init(channelCount: channels.count, frameCount: channels[0].count)
        for (c, samples) in channels.enumerated() { set(channel: c, samples) }
    }

    deinit {
        storage.deallocate()
        mutablePointers.deallocate()
        constPointers.deallocate()
        offsetMutablePointers.deallocate()
        offsetConstPointers.deallocate()
    }

    /// Channel pointers for `process` (in place, or as outputs).
    public var outputs: UnsafePointer<UnsafeMutablePointer<Float>> { UnsafePointer(mutablePointers) }
    /// Channel pointers for `process(inputs:...)`.
    public var inputs: UnsafePointer<UnsafePointer<Float>> { UnsafePointer(constPointers) }

    /// Channel pointers starting at frame `offset` (valid until the next call of either offset method).
    public func outputs(offset: Int) -> UnsafePointer<UnsafeMutablePointer<Float>> {
        for c in 0..<channelCount { offsetMutablePointers[c] = mutablePointers[c] + offset }
        return UnsafePointer(offsetMutablePointers)
    }

    /// Input channel pointers starting at frame `offset`.
    public func inputs(offset: Int) -> UnsafePointer<UnsafePointer<Float>> {
        for c in 0..<channelCount { offsetConstPointers[c] = constPointers[c] + offset }
        return UnsafePointer(offsetConstPointers)
    }

    /// A copy of channel `c`.
    public func channel(_ c: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: mutablePointers[c], count: frameCount))
    }

    /// A copy of frames `range` of channel `c`.
    public func channel(_ c: Int, frames range: Range<Int>) -> [Float] {
        Array(UnsafeBufferPointer(start: mutablePointers[c] + range.lowerBound, count: range.count))
    }

    /// Overwrites channel `c` with `samples` (at most `frameCount` of them).
    public func set(channel c: Int, _ samples: [Float]) {
        precondition(samples.count <= frameCount)
        samples.withUnsafeBufferPointer { mutablePointers[c].update(from: $0.baseAddress!, count: samples.count) }
    }

    /// Copies every channel of `other` (same shape) into these buffers.
    public func copy(from other: ChannelBuffers) {
        precondition(other.channelCount == channelCount && other.frameCount == frameCount)
        storage.update(from: other.storage, count: channelCount * frameCount)
    }

    /// All samples of all channels, channel after channel.
    public var allSamples: [Float] {
        Array(UnsafeBufferPointer(start: storage, count: channelCount * frameCount))
    }
}
