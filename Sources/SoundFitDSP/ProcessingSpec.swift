/// What a kernel is prepared for: the sample rate, the largest block it processes at once, and
/// the number of channels. Kernels allocate everything they need from a spec in `init`.
public struct ProcessingSpec: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Double
    /// The largest chunk processed at once. `process` accepts any frame count and chunks
    /// internally; scratch buffers are this long.
    public var maximumFrameCount: Int
    /// Number of non-interleaved channels, `1...64`.
    public var channelCount: Int

    /// Channel counts a kernel accepts.
    public static var supportedChannelCounts: ClosedRange<Int> { 1...64 }

    public init(sampleRate: Double, maximumFrameCount: Int, channelCount: Int) {
        self.sampleRate = sampleRate
        self.maximumFrameCount = maximumFrameCount
        self.channelCount = channelCount
    }

    /// True when a kernel can be prepared with this spec: a finite positive sample rate, a
    /// positive maximum frame count and 1...64 channels.
    public var isValid: Bool {
        sampleRate.isFinite && sampleRate > 0 && maximumFrameCount > 0
            && Self.supportedChannelCounts.contains(channelCount)
    }
}
