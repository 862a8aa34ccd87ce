/// The biquad stage: one of the eight cookbook responses on every channel, with smoothed
/// parameters and a click-free bypass.
///
/// Coefficients are designed in float64 with `BiquadCoefficients.rbj` from the running sample
/// rate, converted exactly to a TPT state-variable filter (`StateVariableParameters`), and run in
/// float32 with four channels per SIMD lane group (two groups per loop when there are more than
/// four channels). In steady state the loop advances two samples per update (an exact two-step
/// form of the same recursion), pairing frames on their absolute index: calls of even length give
/// bit-identical output however the signal is split; odd lengths differ only by float rounding.
///
/// Smoothing: cutoff (in the log domain), Q and gain (in dB) move linearly over 20 ms; a type
/// change morphs the SVF parameters over 10 ms. While anything moves, coefficients are redesigned
/// every `segmentLength` samples and the loop coefficients are interpolated linearly per sample.
/// In steady state no coefficient is computed. Enabling resets the state and fades the filtered
/// signal in over 10 ms; disabling fades it out, after which the stage is skipped entirely (the
/// buffers are left untouched, bit for bit).
///
/// The per-sample loops run on the `SIMDPath` chosen at set-up: the Swift loops (`FilterLoops`) or
/// their AVX2/FMA build in C (`FilterLoopsAVX2FMA.swift`), which agree within float tolerance.
///
/// Threads: `init` allocates and must not run on the audio thread; every other method is
/// real-time safe and may be called on the audio thread. The value is not shared between
/// threads: one owner calls `apply` and `process`.
public struct BiquadFilter: ~Copyable {
    /// Samples between two coefficient designs while parameters move.
    public static var segmentLength: Int { 16 }
    /// Duration of a cutoff, Q or gain move.
    public static var parameterRampSeconds: Double { 0.020 }
    /// Duration of a type morph.
    public static var typeMorphSeconds: Double { 0.010 }
    /// Duration of the enable/disable cross-fade.
    public static var bypassFadeSeconds: Double { 0.010 }

    public private(set) var spec: ProcessingSpec
    /// The current targets (clamped into range).
    public private(set) var settings: FilterSettings
    /// The build of the per-sample loops that runs (see `SIMDPath`), fixed at set-up.
    public let simdPath: SIMDPath

    private let groupCount: Int
    /// Per group of four channels: `[ic1, ic2]`.
    private let states: UnsafeMutablePointer<SIMD4<Float>>
    /// Interleaved frames of two lane groups (`2 × scratchFrames` SIMD4 values).
    private let scratch: UnsafeMutablePointer<SIMD4<Float>>
    private let scratchFrames: Int

    // Control-rate smoothers (one step = one segment).
    private var logCutoff: LinearRamp
    private var q: LinearRamp
    private var gain: LinearRamp
    private var morph: LinearRamp
    private var morphOrigin: StateVariableParameters
    private var wet: LinearRamp
    private var parameterRampSegments = 1
    private var typeMorphSegments = 1
    private var bypassFadeSegments = 1

    /// SVF parameters and loop coefficients at the end of the current segment (in steady state:
    /// the ones in use).
    private var parameters: StateVariableParameters
    private var coefficients: SVFLoopCoefficients
    /// Two-step form of `coefficients` for the steady loop (valid in `.steady`).
    private var twoStepCoefficients: SIMD8<Float>
    /// Parity of the number of frames processed since the last reset (pairs the steady loop's
    /// two-step updates on absolute frame indices).
    private var frameParity = 0
    private var wetLevel: Float
    // Per-sample interpolation inside the open segment.
    private var segmentStart: SIMD8<Float>
    private var segmentIncrement: SIMD8<Float>
    private var wetStart: Float = 0
    private var wetIncrement: Float = 0
    private var segmentPosition = 0
    private var segmentIsOpen = false
    private var mode: Mode

    private enum Mode {
        /// Disabled and faded out: `process` returns at once.
        case bypassed
        /// Enabled, constant coefficients, fully wet.
        case steady
        /// Something moves (parameters, type, bypass fade): per-sample interpolation.
        case moving
    }

    /// Prepares the filter for `spec`, starting at `settings` (no ramp from defaults), running the
    /// per-sample loops on `simdPath` if this CPU can (else on the baseline).
    /// Allocates; call off the audio thread.
    public init(spec: ProcessingSpec, settings: FilterSettings = FilterSettings(), simdPath: SIMDPath = .preferred) {
        precondition(spec.isValid, "invalid ProcessingSpec \(spec)")
        self.spec = spec
        self.simdPath = simdPath.runnable
        let settings = settings.clamped()
        self.settings = settings
        groupCount = (spec.channelCount + 3) / 4
        states = .allocate(capacity: 2 * groupCount)
        states.initialize(repeating: SIMD4<Float>(), count: 2 * groupCount)
        scratchFrames = min(spec.maximumFrameCount, 256)
        scratch = .allocate(capacity: 2 * scratchFrames)
        scratch.initialize(repeating: SIMD4<Float>(), count: 2 * scratchFrames)
        logCutoff = LinearRamp(value: libmLog(Double(settings.cutoff)))
        q = LinearRamp(value: Double(settings.q))
        gain = LinearRamp(value: Double(settings.gain))
        morph = LinearRamp(value: 1)
        wet = LinearRamp(value: settings.isEnabled ? 1 : 0)
        let p = StateVariableParameters(
            BiquadCoefficients.rbj(type: settings.type, cutoff: Double(settings.cutoff),
                                   q: Double(settings.q), gain: Double(settings.gain),
                                   sampleRate: spec.sampleRate))
        morphOrigin = p
        parameters = p
        coefficients = SVFLoopCoefficients(p)
        twoStepCoefficients = SVFTwoStepCoefficients(p).packed
        wetLevel = settings.isEnabled ? 1 : 0
        segmentStart = coefficients.packed
        segmentIncrement = SIMD8()
        mode = settings.isEnabled ? .steady : .bypassed
        updateRampLengths()
        reset()
    }

    deinit {
        states.deallocate()
        scratch.deallocate()
    }

    /// True when the stage currently leaves the buffers untouched (disabled and faded out).
    public var isBypassed: Bool { mode == .bypassed }

    /// True while parameters, type or the bypass fade are still moving.
    public var isSmoothing: Bool { mode == .moving }

    /// The direct-form coefficients in use (at the end of the current segment while moving).
    /// Real-time safe.
    public var currentCoefficients: BiquadCoefficients { parameters.biquadCoefficients }

    /// Changes the sample rate: recomputes ramp lengths and coefficients for the current
    /// targets and clears the state. Real-time safe: may be called on the audio thread.
    public mutating func setSampleRate(_ sampleRate: Double) {
        precondition(sampleRate.isFinite && sampleRate > 0)
        spec.sampleRate = sampleRate
        updateRampLengths()
        reset()
    }

    /// Clears the filter state and jumps every smoother to its target. Real-time safe.
    public mutating func reset() {
        clearStates()
        logCutoff.snap(to: libmLog(Double(settings.cutoff)))
        q.snap(to: Double(settings.q))
        gain.snap(to: Double(settings.gain))
        morph.snap(to: 1)
        wet.snap(to: settings.isEnabled ? 1 : 0)
        wetLevel = Float(wet.value)
        parameters = designParameters()
        coefficients = SVFLoopCoefficients(parameters)
        twoStepCoefficients = SVFTwoStepCoefficients(parameters).packed
        segmentIsOpen = false
        segmentPosition = 0
        frameParity = 0
        mode = settings.isEnabled ? .steady : .bypassed
    }

    /// Sets new targets. Moves of cutoff, Q and gain are smoothed over 20 ms, a type change
    /// morphs over 10 ms, enabling or disabling cross-fades over 10 ms. Real-time safe.
    public mutating func apply(_ newSettings: FilterSettings) {
        let target = newSettings.clamped()
        guard target != settings else { return }
        let previous = settings
        settings = target
        if mode == .bypassed {
            // Not audible: nothing to smooth. Enabling starts from the targets and fades in.
            if target.isEnabled { enableFromBypass() }
            return
        }
        if target.cutoff != previous.cutoff {
            logCutoff.setTarget(libmLog(Double(target.cutoff)), steps: parameterRampSegments)
        }
        if target.q != previous.q { q.setTarget(Double(target.q), steps: parameterRampSegments) }
        if target.gain != previous.gain {
            if target.type.usesGain || previous.type.usesGain {
                gain.setTarget(Double(target.gain), steps: parameterRampSegments)
            } else {
                gain.snap(to: Double(target.gain))   // not part of this response: nothing to smooth
            }
        }
        if target.type != previous.type {
            morphOrigin = parameters
            morph.snap(to: 0)
            morph.setTarget(1, steps: typeMorphSegments)
        }
        if target.isEnabled != previous.isEnabled {
            wet.setTarget(target.isEnabled ? 1 : 0, steps: bypassFadeSegments)
        }
        mode = .moving
    }

    /// Filters `spec.channelCount` non-interleaved channels in place. Any `frameCount >= 0`.
    /// Real-time safe: may be called on the audio thread.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        var chunkStart = 0
        while chunkStart < frameCount && mode != .bypassed {
            let count = min(frameCount &- chunkStart, spec.maximumFrameCount)
            processChunk(buffers, chunkStart: chunkStart, count: count)
            chunkStart &+= count
        }
    }

    // MARK: - Control

    private mutating func updateRampLengths() {
        let segmentSeconds = Double(Self.segmentLength) / spec.sampleRate
        parameterRampSegments = LinearRamp.steps(forSeconds: Self.parameterRampSeconds, stepSeconds: segmentSeconds)
        typeMorphSegments = LinearRamp.steps(forSeconds: Self.typeMorphSeconds, stepSeconds: segmentSeconds)
        bypassFadeSegments = LinearRamp.steps(forSeconds: Self.bypassFadeSeconds, stepSeconds: segmentSeconds)
    }

    private func clearStates() {
        states.update(repeating: SIMD4<Float>(), count: 2 * groupCount)
    }

    private mutating func enableFromBypass() {
        clearStates()
        logCutoff.snap(to: libmLog(Double(settings.cutoff)))
        q.snap(to: Double(settings.q))
        gain.snap(to: Double(settings.gain))
        morph.snap(to: 1)
        parameters = designParameters()
        coefficients = SVFLoopCoefficients(parameters)
        wet.snap(to: 0)
        wet.setTarget(1, steps: bypassFadeSegments)
        wetLevel = 0
        segmentIsOpen = false
        mode = .moving
    }

    /// The SVF parameters for the smoothers' current values (morphed while a type change runs).
    private func designParameters() -> StateVariableParameters {
        let cutoff = Self.designCutoff(libmExp(logCutoff.value), sampleRate: spec.sampleRate)
        let design = StateVariableParameters(
            BiquadCoefficients.rbj(type: settings.type, cutoff: cutoff, q: q.value, gain: gain.value,
                                   sampleRate: spec.sampleRate))
        return morph.isRamping ? morphOrigin.interpolated(to: design, amount: morph.value) : design
    }

    /// Opens the next segment. Returns false (and leaves `.moving`) when nothing moves any more.
    private mutating func beginSegment() -> Bool {
        if !wet.isRamping && wet.value == 0 {
            // Faded out: skip the rest of any parameter move, the stage is not heard.
            logCutoff.snapToTarget()
            q.snapToTarget()
            gain.snapToTarget()
            morph.snapToTarget()
            mode = .bypassed
            return false
        }
        let parametersMove = logCutoff.isRamping || q.isRamping || gain.isRamping || morph.isRamping
        guard parametersMove || wet.isRamping else {
            twoStepCoefficients = SVFTwoStepCoefficients(parameters).packed
            mode = .steady
            return false
        }
        let start = coefficients.packed
        if parametersMove {
            logCutoff.step()
            q.step()
            gain.step()
            morph.step()
            parameters = designParameters()
            coefficients = SVFLoopCoefficients(parameters)
        }
        let length = Float(Self.segmentLength)
        segmentStart = start
        segmentIncrement = (coefficients.packed - start) / length
        wetStart = wetLevel
        wetLevel = Float(wet.step())
        wetIncrement = (wetLevel - wetStart) / length
        segmentPosition = 0
        segmentIsOpen = true
        return true
    }

    // MARK: - Processing

    private mutating func processChunk(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>,
                                       chunkStart: Int, count: Int) {
        var done = 0
        while done < count {
            switch mode {
            case .bypassed:
                return
            case .steady:
                runSteady(buffers, chunkStart: chunkStart, from: done, count: count &- done)
                frameParity ^= (count &- done) & 1
                done = count
            case .moving:
                if !segmentIsOpen && !beginSegment() { continue }
                let n = min(Self.segmentLength &- segmentPosition, count &- done)
                runMoving(buffers, chunkStart: chunkStart, from: done, count: n)
                frameParity ^= n & 1
                segmentPosition &+= n
                if segmentPosition == Self.segmentLength { segmentIsOpen = false }
                done &+= n
            }
        }
        flushDenormalStates()
    }

    /// Runs the filter over frames `from ..< from + count` of the chunk: each group of four
    /// channels (two groups at a time when possible) is interleaved into the scratch in pieces of
    /// at most `scratchFrames`, filtered, and written back.
    @inline(__always)
    private func runGroups(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, chunkStart: Int, from: Int, count: Int,
                           steady: FilterTwoStepTap?, ramp: FilterRamp) {
        let channelCount = spec.channelCount
        let a = scratch, b = scratch + scratchFrames
        var group = 0
        while group < groupCount {
            let paired = group &+ 1 < groupCount
            let baseA = group &* 4, baseB = baseA &+ 4
            let lanesA = min(4, channelCount &- baseA), lanesB = paired ? min(4, channelCount &- baseB) : 0
            let groupStates = states + 2 &* group
            var done = 0
            while done < count {
                let n = min(scratchFrames, count &- done)
                let start = chunkStart &+ from &+ done
                FilterLoops.interleave(buffers, base: baseA, lanes: lanesA, start: start, count: n, into: a)
                if paired { FilterLoops.interleave(buffers, base: baseB, lanes: lanesB, start: start, count: n, into: b) }
                if let tap = steady {
                    let odd = (frameParity ^ done) & 1 == 1
                    if paired {
                        FilterLoops.steadyPair(a, b, states: groupStates, count: n, odd: odd, tap: tap)
                    } else {
                        FilterLoops.steadySingle(a, states: groupStates, count: n, odd: odd, tap: tap)
                    }
                } else {
                    var pieceRamp = ramp
                    pieceRamp.position &+= done
                    if paired {
                        FilterLoops.movingPair(a, b, states: groupStates, count: n, ramp: pieceRamp)
                    } else {
                        FilterLoops.movingSingle(a, states: groupStates, count: n, ramp: pieceRamp)
                    }
                }
                FilterLoops.deinterleave(a, into: buffers, base: baseA, lanes: lanesA, start: start, count: n)
                if paired { FilterLoops.deinterleave(b, into: buffers, base: baseB, lanes: lanesB, start: start, count: n) }
                done &+= n
            }
            group &+= paired ? 2 : 1
        }
    }

    private mutating func runSteady(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>,
                                    chunkStart: Int, from: Int, count: Int) {
        if simdPath == .avx2FMA {
            var loop = coefficients.packed, twoStep = twoStepCoefficients
            filterSteadyAVX2FMA(buffers, channelCount: spec.channelCount, start: chunkStart &+ from, count: count,
                                states: states, scratch: scratch, scratchFrames: scratchFrames, parity: frameParity,
                                loop: &loop, twoStep: &twoStep)
            return
        }
        let ramp = FilterRamp(start: coefficients.packed, increment: SIMD8(), wetStart: 1, wetIncrement: 0, position: 0)
        runGroups(buffers, chunkStart: chunkStart, from: from, count: count,
                  steady: FilterTwoStepTap(coefficients.packed, twoStepCoefficients), ramp: ramp)
    }

    private mutating func runMoving(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>,
                                    chunkStart: Int, from: Int, count: Int) {
        if simdPath == .avx2FMA {
            var start = segmentStart, increment = segmentIncrement
            filterMovingAVX2FMA(buffers, channelCount: spec.channelCount, start: chunkStart &+ from, count: count,
                                states: states, scratch: scratch, scratchFrames: scratchFrames, rampStart: &start,
                                rampIncrement: &increment, wetStart: wetStart, wetIncrement: wetIncrement,
                                position: segmentPosition)
            return
        }
        let ramp = FilterRamp(start: segmentStart, increment: segmentIncrement,
                              wetStart: wetStart, wetIncrement: wetIncrement, position: segmentPosition)
        runGroups(buffers, chunkStart: chunkStart, from: from, count: count, steady: nil, ramp: ramp)
    }

    /// Zeroes state lanes that decayed below 1e-30 so that silence after a signal never runs on
    /// denormals (the host also sets FTZ/DAZ; this keeps unflushed threads fast too).
    private func flushDenormalStates() {
        let tiny = SIMD4<Float>(repeating: 1e-30)
        for i in 0..<(2 &* groupCount) {
            let s = states[i]
            states[i] = s.replacing(with: 0, where: (s .< tiny) .& (s .> -tiny))
        }
    }
}

extension BiquadFilter: @unchecked Sendable {}
