/// The hearing test's stimulus: a pure tone to one ear's channels, steady or pulsed, with
/// raised-cosine ramps so that no click gives the tone away; silence on every other channel.
///
/// Channels follow the personalization's convention: channel 1, 3, 5… (index 0, 2, 4…) is the
/// left ear, 2, 4, 6… the right; a mono output carries the left ear.
///
/// The sine is computed in float64 from an exact phase (frame count × frequency), so it is as
/// pure as float32 output allows (THD far below −100 dB).
///
/// Threads: every method is real-time safe (no allocation, no locks); one owner at a time.
public struct ToneStimulus: Sendable, Equatable {
    /// Which channels a tone goes to.
    public enum Ear: UInt8, Sendable, Equatable {
        case left, right
    }

    /// One presentation.
    public struct Tone: Sendable, Equatable {
        public var frequency: Double
        /// Peak amplitude of the sine (1 = full scale).
        public var amplitude: Double
        public var ear: Ear
        public var seconds: Double
        /// Pulses of `pulseSeconds` every `2 × pulseSeconds` instead of one steady tone.
        public var isPulsed: Bool

        public init(frequency: Double, amplitude: Double, ear: Ear, seconds: Double, isPulsed: Bool = false) {
            self.frequency = frequency
            self.amplitude = amplitude
            self.ear = ear
            self.seconds = seconds
            self.isPulsed = isPulsed
        }
    }

    /// Length of each raised-cosine ramp.
    public static var rampSeconds: Double { 0.025 }
    /// Length of a pulse (and of the pause after it) in the pulsed form.
    public static var pulseSeconds: Double { 0.2 }

    public private(set) var sampleRate: Double
    /// The tone being played, if any.
    public private(set) var tone: Tone?
    /// Frames of the current tone rendered so far.
    public private(set) var elapsedFrames = 0

    private var totalFrames = 0
    private var rampFrames = 1
    private var pulseFrames = 1

    public init(sampleRate: Double) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        self.sampleRate = sampleRate
    }

    public var isPlaying: Bool { tone != nil }

    /// Starts `tone` at the next rendered frame, replacing any tone still playing.
    public mutating func start(_ tone: Tone) {
        self.tone = tone
        elapsedFrames = 0
        totalFrames = max(0, Int((tone.seconds * sampleRate).rounded()))
        rampFrames = max(1, Int((Self.rampSeconds * sampleRate).rounded()))
        pulseFrames = max(2 * rampFrames, Int((Self.pulseSeconds * sampleRate).rounded()))
        if totalFrames == 0 { self.tone = nil }
    }

    /// Stops at once (used when the test is paused or cancelled; a cut is acceptable there).
    public mutating func stop() {
        tone = nil
    }

    /// Changes the sample rate; a tone in progress is stopped.
    public mutating func setSampleRate(_ newRate: Double) {
        precondition(newRate.isFinite && newRate > 0)
        sampleRate = newRate
        tone = nil
    }

    /// Writes `frameCount` frames: the tone on its ear's channels, silence on the others (and
    /// everywhere when no tone plays). Real-time safe.
    public mutating func render(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int) {
        for channel in 0..<channelCount {
            buffers[channel].update(repeating: 0, count: frameCount)
        }
        guard let tone else { return }
        let first = tone.ear == .left || channelCount == 1 ? 0 : 1
        let frames = min(frameCount, totalFrames - elapsedFrames)
        for frame in 0..<frames {
            let n = elapsedFrames + frame
            let gain = envelope(n, pulsed: tone.isPulsed)
            guard gain > 0 else { continue }
            // The phase from the frame number, reduced exactly, keeps the sine exact for any length.
            let cycles = Double(n) * tone.frequency / sampleRate
            let phase = 2 * Double.pi * (cycles - cycles.rounded(.down))
            let sample = Float(tone.amplitude * gain * libmSin(phase))
            var channel = first
            while channel < channelCount {
                buffers[channel][frame] = sample
                channel += 2
            }
        }
        elapsedFrames += frames
        if elapsedFrames >= totalFrames { self.tone = nil }
    }

    /// The envelope at frame `n` of the tone: raised-cosine ramps at each start and end.
    private func envelope(_ n: Int, pulsed: Bool) -> Double {
        var position = n, length = totalFrames
        if pulsed {
            position = n % (2 * pulseFrames)
            guard position < pulseFrames else { return 0 }
            length = min(pulseFrames, totalFrames - (n - position))
        }
        let fromEnd = length - 1 - position
        let edge = min(position, fromEnd)
        guard edge < rampFrames else { return 1 }
        guard edge >= 0 else { return 0 }
        return 0.5 * (1 - libmCos(Double.pi * Double(edge) / Double(rampFrames)))
    }
}
