import Foundation

/// What the masking noise plays: a narrow band of noise around `frequency` on one ear's
/// channels, at an RMS `amplitude`.
///
/// The ear is the one that RECEIVES the noise (the ear not under test). The amplitude is the
/// RMS of the whole band (1 = the RMS of a full-scale square wave; a full-scale sine has RMS
/// 1/√2): `ToneCalibration.maskingAmplitude(effectiveMasking:frequency:)` in SoundFitHearing
/// converts dB EM to it.
public struct MaskingNoise: Sendable, Equatable {
    /// Centre of the band in Hz (the test frequency).
    public var frequency: Double
    /// The ear whose channels carry the noise.
    public var ear: ToneStimulus.Ear
    /// RMS of the band (1 = full-scale RMS).
    public var amplitude: Double

    public init(frequency: Double, ear: ToneStimulus.Ear, amplitude: Double) {
        self.frequency = frequency
        self.ear = ear
        self.amplitude = amplitude
    }
}

/// The hearing test's masking noise: narrow-band noise, one third of an octave wide around the
/// test frequency, continuous on one ear's channels until set off.
///
/// - Band: white noise from a xorshift64* generator through a cascade of `stageCount`
///   identical band-pass biquads (RBJ constant-peak form, float64 state) whose −3 dB points
///   are at f·2^(±1/6), i.e. a −3 dB bandwidth of one third of an octave. The GSI Pello manual
///   (audiometer conforming to ANSI S3.6/IEC 60645-1) describes the narrow-band masking noise of
///   audiometers as "geometrically centered at the selected test frequency" with "a 3 dB down
///   bandwidth of a 1/3 octave at a minimum and ½ octave at a maximum"; ISO 389-4 gives its
///   reference levels for 1/3- and 1/2-octave bands. The skirt slope required by IEC 60645-1
///   was not found in the sources at hand: the cascade falls ≥ 30 dB one octave from the
///   centre (24 dB per octave beyond), which the tests measure.
/// - Level: the band's RMS equals `MaskingNoise.amplitude`: the cascade's power gain for white
///   noise (the energy of its impulse response) is computed when the band is set up and
///   divided out.
/// - Continuity: the noise never starts or stops abruptly. Every change of level, on and off
///   included, follows a raised-cosine ramp of `rampSeconds`; a change of band or ear ramps
///   down, switches, and ramps up again. The filters are run for `warmUpSeconds` before a band
///   is heard, so it starts at its steady level.
/// - Channels follow `ToneStimulus`: even channel indices are the left ear, odd the right. A
///   mono output has no other ear: the noise is not played there (it would mask the ear under
///   test itself).
///
/// Threads: every method is real-time safe (no allocation, no locks, bounded loops); one owner.
public struct NarrowBandNoise: Sendable {
    /// Length of each raised-cosine ramp (on, off and level changes).
    public static var rampSeconds: Double { 0.025 }
    /// The −3 dB bandwidth in octaves.
    public static var bandwidthOctaves: Double { 1.0 / 3 }
    /// How long a new band's filters run unheard before it ramps in.
    public static var warmUpSeconds: Double { 0.05 }
    /// Band-pass sections in the cascade.
    public static var stageCount: Int { 4 }

    /// One float64 biquad section's state (transposed direct form II).
    private struct Stage: Sendable {
        var z1 = 0.0
        var z2 = 0.0

        @inline(__always)
        mutating func run(_ x: Double, _ c: Coefficients) -> Double {
            let y = c.b0 * x + z1
            z1 = -c.a1 * y + z2
            z2 = -c.b0 * x - c.a2 * y
            return y
        }
    }

    /// Band-pass coefficients normalized by a0; b1 = 0 and b2 = −b0.
    private struct Coefficients: Sendable {
        var b0 = 0.0
        var a1 = 0.0
        var a2 = 0.0
    }

    public private(set) var sampleRate: Double
    /// The band in the filters (frequency and ear; amplitude = the level it ramps to), nil when
    /// silent.
    public private(set) var playing: MaskingNoise?
    /// What was asked last; `playing` follows it after a ramp down when the band or ear differ.
    public private(set) var target: MaskingNoise?
    /// The current RMS amplitude (ramped).
    public private(set) var gain = 0.0

    private var random: UInt64
    private var coefficients = Coefficients()
    private var s0 = Stage(), s1 = Stage(), s2 = Stage(), s3 = Stage()
    /// 1 / √(power gain of the cascade): scales unit-variance white noise to a unit-RMS band.
    private var normalization = 0.0
    private var rampFrom = 0.0
    private var rampTo = 0.0
    private var rampPosition = 0
    private var rampFrames = 1

    /// `seed` makes the noise reproducible (0 is replaced by a fixed non-zero seed).
    public init(sampleRate: Double, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        self.sampleRate = sampleRate
        random = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
        rampFrames = Self.frames(Self.rampSeconds, sampleRate)
        rampPosition = rampFrames
    }

    /// Whether anything is heard now or soon (on, or ramping).
    public var isAudible: Bool { gain > 0 || rampPosition < rampFrames && rampTo > 0 }

    private static func frames(_ seconds: Double, _ sampleRate: Double) -> Int {
        max(1, Int((seconds * sampleRate).rounded()))
    }

    /// Sets the noise (nil: off), ramping from the current level. Real-time safe.
    public mutating func set(_ masking: MaskingNoise?) {
        var masking = masking
        if let requested = masking, !(requested.amplitude.isFinite && requested.amplitude > 0
            && requested.frequency.isFinite && requested.frequency > 0 && requested.frequency < sampleRate / 2) {
            masking = nil
        }
        target = masking
        guard let masking else {
            startRamp(to: 0)
            return
        }
        if let playing, playing.frequency == masking.frequency, playing.ear == masking.ear {
            self.playing = masking
            startRamp(to: masking.amplitude)
        } else if playing == nil || gain == 0 && !isRamping {
            configure(masking)
            startRamp(to: masking.amplitude)
        } else {
            // Another band or ear: down first; `finishRamp` switches.
            startRamp(to: 0)
        }
    }

    /// Changes the sample rate: the band is set up again at the new rate and ramps in from
    /// silence to its level. Real-time safe.
    public mutating func setSampleRate(_ newRate: Double) {
        precondition(newRate.isFinite && newRate > 0)
        sampleRate = newRate
        rampFrames = Self.frames(Self.rampSeconds, newRate)
        gain = 0
        rampPosition = rampFrames
        playing = nil
        set(target)
    }

    /// Stops at once (no ramp): for a renderer that is silent anyway.
    public mutating func stop() {
        target = nil
        playing = nil
        gain = 0
        rampPosition = rampFrames
    }

    private var isRamping: Bool { rampPosition < rampFrames }

    private mutating func startRamp(to level: Double) {
        rampFrom = gain
        rampTo = level
        rampPosition = 0
        if rampFrom == rampTo { finishRamp() }
    }

    /// The ramp reached its end: take a pending band switch, or fall silent.
    private mutating func finishRamp() {
        rampPosition = rampFrames
        gain = rampTo
        guard gain == 0 else { return }
        if let target {
            if let playing, playing.frequency == target.frequency, playing.ear == target.ear { return }
            configure(target)
            startRamp(to: target.amplitude)
        } else {
            playing = nil
        }
    }

    /// Sets up the filters for `masking`'s band, measures their power gain and runs them
    /// unheard for `warmUpSeconds`. Bounded: at most one second of samples for the gain and
    /// `warmUpSeconds` for the warm-up.
    private mutating func configure(_ masking: MaskingNoise) {
        playing = masking
        coefficients = Self.coefficients(frequency: masking.frequency, sampleRate: sampleRate)
        normalization = 1 / Self.powerGain(coefficients, sampleRate: sampleRate).squareRoot()
        s0 = Stage(); s1 = Stage(); s2 = Stage(); s3 = Stage()
        for _ in 0..<Self.frames(Self.warmUpSeconds, sampleRate) { _ = nextBandSample() }
    }

    /// One band-pass section of the cascade: the −3 dB bandwidth of `stageCount` equal
    /// sections is `bandwidthOctaves`. Each section's own bandwidth B (octaves) follows from
    /// |H|² = 1/(1 + x²)^n being −3 dB at x² = 2^(1/n) − 1, x = Q·(2^(b/2) − 2^(−b/2)) at the
    /// band edges b = bandwidthOctaves; the RBJ form with that B pre-warps the bilinear
    /// transform's bandwidth.
    private static func coefficients(frequency: Double, sampleRate: Double) -> Coefficients {
        let n = Double(stageCount)
        let edge = pow(2, bandwidthOctaves / 2) - pow(2, -bandwidthOctaves / 2)
        let q = (pow(2, 1 / n) - 1).squareRoot() / edge
        let stageOctaves = 2 * asinh(1 / (2 * q)) / log(2)
        let w0 = 2 * Double.pi * frequency / sampleRate
        let sinW0 = libmSin(w0)
        let alpha = sinW0 * sinh(log(2) / 2 * stageOctaves * w0 / sinW0)
        let a0 = 1 + alpha
        return Coefficients(b0: alpha / a0, a1: -2 * libmCos(w0) / a0, a2: (1 - alpha) / a0)
    }

    /// The energy of the cascade's impulse response: its output variance for unit-variance
    /// white noise.
    private static func powerGain(_ c: Coefficients, sampleRate: Double) -> Double {
        var a = Stage(), b = Stage(), d = Stage(), e = Stage()
        var energy = 0.0
        let limit = max(4096, Int(sampleRate))
        for n in 0..<limit {
            let y = e.run(d.run(b.run(a.run(n == 0 ? 1 : 0, c), c), c), c)
            energy += y * y
            // Done when every section's state has decayed (not merely the output crossing zero).
            if n > 2048 && n % 64 == 0 {
                let state = abs(a.z1) + abs(a.z2) + abs(b.z1) + abs(b.z2) + abs(d.z1) + abs(d.z2) + abs(e.z1) + abs(e.z2)
                if state * state < energy * 1e-20 { break }
            }
        }
        return max(energy, .leastNormalMagnitude)
    }

    /// The next white-noise sample: uniform in [−√3, √3) (unit variance), xorshift64*.
    @inline(__always)
    private mutating func nextWhite() -> Double {
        random ^= random >> 12
        random ^= random << 25
        random ^= random >> 27
        let bits = (random &* 0x2545_F491_4F6C_DD1D) >> 11
        return (Double(bits) * 0x1p-53 * 2 - 1) * 1.7320508075688772
    }

    /// The next sample of the unit-RMS band.
    @inline(__always)
    private mutating func nextBandSample() -> Double {
        let c = coefficients
        return s3.run(s2.run(s1.run(s0.run(nextWhite(), c), c), c), c) * normalization
    }

    /// Adds `frameCount` frames of the noise to its ear's channels (every other channel is left
    /// as it is). Nothing on a mono output. Real-time safe.
    public mutating func render(adding buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int,
                                frameCount: Int) {
        for frame in 0..<frameCount {
            if isRamping {
                let progress = Double(rampPosition) / Double(rampFrames)
                gain = rampFrom + (rampTo - rampFrom) * 0.5 * (1 - libmCos(Double.pi * progress))
                rampPosition += 1
                // The end of a ramp may switch to another band (set up here) or fall silent.
                if rampPosition >= rampFrames { finishRamp() }
            }
            guard let playing, gain > 0 || isRamping else { return }
            let sample = Float(nextBandSample() * gain)
            // Mono: no other ear to mask (the generator still runs, so the noise stays continuous).
            guard channelCount > 1 else { continue }
            var channel = playing.ear == .right ? 1 : 0
            while channel < channelCount {
                buffers[channel][frame] += sample
                channel += 2
            }
        }
    }
}
