import Foundation
import Synchronization
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitProcessing
import SoundFitState

/// Runs a hearing test in the graph: drives `PureToneAudiometry` on the clock with the audio
/// engine's tone stimulus and takes the listener's presses.
///
/// One presentation: a random gap (`gap_min…gap_max`), then the tone (or a silent catch trial),
/// its onset as the audio thread reports it (polled every millisecond), the response window
/// relative to that onset, and the answer recorded. A press outside every window is a false
/// alarm of the ear under test. Pausing stops the tone and drops the presentation under way
/// (it is presented again after resuming).
///
/// Blind surfaces: nothing the runner reports falls between the moment a presentation is
/// scheduled (its gap begins) and the end of its response window. `running` goes out when the
/// test starts and once after each response window closes, for tones and catch trials alike,
/// without the level; the next gap begins after it. There is no operator view with live
/// levels: the levels are in the record (`HearingTestRecord.presentations`) once the test ends.
///
/// Randomness (catch trials, gaps) is seeded (`HearingTestRandom`); the seed, the software
/// version, the sample rate, the listener's id and every presentation go into the record.
///
/// For the whole test the session is interrupted (reason `hearing test`) and the engine is in
/// test mode. On completion the results are reported and kept in the state directory
/// (`hearing-tests/<date>.json`); the result becomes the hearing profile through
/// `submitProfile` (presets and recommendation, as `/profile/audiogram`) only when no tested ear
/// has `problems` (the gate); otherwise it waits for `submitLast()` (`/test/submit`). Then the
/// interruption is resolved. Cancelled or failed, nothing is submitted. The session ending (the
/// JACK server lost, a deactivation) fails the test; the interruption is then resolved as soon
/// as a session is active again.
///
/// Thread rules: any thread except the audio thread; the test itself runs in a task.
public final class HearingTestRunner: Sendable {
    public static let interruptionReason = "hearing test"
    /// How long the audio thread may take to start a tone before the test fails.
    static let onsetTimeout: Duration = .seconds(2)

    private let runtime: SoundFitRuntime
    private let stateDirectory: URL?
    private let subscribers = Subscribers<HearingTestEvent>()
    private let shared: Mutex<Shared>

    private struct Shared {
        var state: HearingTestState = .idle
        var settings: HearingTestSettings
        var control = Control.run
        /// The `running` state a pause interrupted, reported again on resuming.
        var runningBeforePause: HearingTestState?
        /// The open response window of the presentation under way.
        var window: (opens: ContinuousClock.Instant, closes: ContinuousClock.Instant)?
        var heardInWindow = false
        /// The first press in the open window (for the latency).
        var firstPress: ContinuousClock.Instant?
        var pressesOutsideWindows = 0
        /// The last finished test, and whether it became the hearing profile.
        var last: (record: HearingTestRecord, applied: Bool)?
        /// The interruption waits for a session to be resolved (the test ended without one).
        var resolvePending = false
    }

    private enum Control {
        case run, pause, cancel
    }

    /// What a wait ended with.
    private enum Wait {
        case elapsed
        /// Paused and resumed: present again.
        case resumed
        case cancelled
        case failed(String)
    }

    /// Why the audio path cannot present tones to a listener now (nil: it can). The JACK host
    /// says so while the server freewheels: tones then last fewer milliseconds than their
    /// frames and go nowhere a listener hears.
    private let audioUnavailable: @Sendable () -> String?

    /// `stateDirectory` keeps each finished test (nil: not kept); `settings` must be valid;
    /// `audioUnavailable` refuses a start while it gives a reason.
    public init(runtime: SoundFitRuntime, stateDirectory: URL? = nil, settings: HearingTestSettings = HearingTestSettings(),
                audioUnavailable: @escaping @Sendable () -> String? = { nil }) {
        precondition((try? settings.validate()) != nil, "invalid hearing test settings \(settings)")
        self.runtime = runtime
        self.stateDirectory = stateDirectory
        self.audioUnavailable = audioUnavailable
        shared = Mutex(Shared(settings: settings))
    }

    /// dB SPL of a full-scale sine: the one place the runner reads the calibration.
    private var fullScaleSPL: Double { runtime.calibration }

    /// A new stream of everything the test reports from now on; buffers without bound.
    public func events() -> AsyncStream<HearingTestEvent> { subscribers.subscribe() }

    /// Calls `body` with every event from now on, on the thread that makes it, before the
    /// request that caused it is answered (quick, non-blocking, never back into the runner). The
    /// OSC surface forwards events this way, so `/sync` orders them. End it with `stopObserving(_:)`.
    public func observeEvents(_ body: @escaping @Sendable (HearingTestEvent) -> Void) -> HearingTestObservation {
        HearingTestObservation(subscribers.observe(body))
    }

    public func stopObserving(_ observation: HearingTestObservation) {
        subscribers.stopObserving(observation.registration)
    }

    public var state: HearingTestState { shared.withLock { $0.state } }

    /// The settings the next test runs with.
    public var settings: HearingTestSettings { shared.withLock { $0.settings } }

    /// Changes the settings; refused while a test runs or with a value out of its range.
    public func setSettings(_ settings: HearingTestSettings) throws {
        try settings.validate()
        try shared.withLock { shared in
            guard !shared.state.isActive else {
                throw ControlError("the hearing test settings cannot change while a test runs")
            }
            shared.settings = settings
        }
    }

    /// The highest level the test presents at `frequency` with `settings`: the configured
    /// maximum, capped by the output safety limit (and full scale) through the calibration.
    public func maximumLevel(at frequency: Double, settings: HearingTestSettings) -> Double {
        let calibration = ToneCalibration(fullScaleSPL: fullScaleSPL, earphone: settings.earphone, corrections: runtime.calibrationTable)
        return min(settings.maximumLevel, Ear.allCases.map {
            calibration.highestHearingLevel(frequency: frequency, limitSPL: runtime.effectiveMaximumOutputSPL, ear: $0) }.min()!)
    }

    /// The highest effective masking (dB EM) the test presents at `frequency` with `settings`:
    /// what the output can play within the safety limit on either ear, through the calibration
    /// (the noise's counterpart of `maximumLevel(at:settings:)`).
    public func maximumMaskingLevel(at frequency: Double, settings: HearingTestSettings) -> Double {
        let calibration = ToneCalibration(fullScaleSPL: fullScaleSPL, earphone: settings.earphone, corrections: runtime.calibrationTable)
        return Ear.allCases.map {
            calibration.highestEffectiveMasking(frequency: frequency, limitSPL: runtime.effectiveMaximumOutputSPL, ear: $0)
        }.min()!
    }

    // MARK: Requests

    /// Starts a test of `ears` at `frequencies` (standard audiometric frequencies within
    /// 125…8000 Hz): interrupts the session and puts the engine in test mode. `listener` names
    /// who takes it (kept in the record); `seed` seeds its randomness (nil: a random seed, kept
    /// in the record). Throws when a test runs, without a session, or for a frequency the
    /// profile could not hold.
    public func start(ears: [Ear], frequencies: [Double] = PureToneAudiometry.defaultFrequencies,
                      listener: String? = nil, seed: UInt64? = nil) async throws {
        if let reason = audioUnavailable() { throw ControlError("the hearing test cannot start: \(reason)") }
        for frequency in frequencies where !Audiogram.standardFrequencies.contains(frequency) {
            throw ControlError("\(frequency) Hz is not a standard audiometric frequency "
                + "(\(Audiogram.standardFrequencies.map { String(Int($0)) }.joined(separator: ", ")) Hz)")
        }
        let settings = try shared.withLock { shared -> HearingTestSettings in
            guard !shared.state.isActive else { throw ControlError("a hearing test is already running (/test/cancel it first)") }
            return shared.settings
        }
        let maximum: @Sendable (Double) -> Double = { [self] in maximumLevel(at: $0, settings: settings) }
        let maximumMasking: @Sendable (Double) -> Double = { [self] in maximumMaskingLevel(at: $0, settings: settings) }
        let seed = seed ?? UInt64.random(in: 0...UInt64.max)
        let test = try PureToneAudiometry(.init(ears: ears, frequencies: frequencies, maximumLevel: maximum,
                                                interauralAttenuation: settings.earphone.interauralAttenuation,
                                                maximumMaskingLevel: maximumMasking),
                                          random: HearingTestRandom.stream(Self.catchTrialStream, seed: seed))
        guard let session = runtime.controller.session else {
            throw ControlError("no processing session is active: the hearing test needs the JACK connection")
        }
        guard let trial = test.currentTrial else { return }
        try shared.withLock { shared in
            guard !shared.state.isActive else { throw ControlError("a hearing test is already running (/test/cancel it first)") }
            shared.state = .running(ear: trial.ear, frequency: trial.frequency, progress: 0)
            shared.control = .run
            shared.window = nil
            shared.heardInWindow = false
            shared.firstPress = nil
            shared.pressesOutsideWindows = 0
            shared.resolvePending = false
        }
        do {
            _ = try await ControlError.refusing { try await session.interrupt(reason: Self.interruptionReason) }
        } catch {
            shared.withLock { $0.state = .idle }
            throw error
        }
        subscribers.yield(.interrupted(true))
        runtime.engine.isInTestMode = true
        subscribers.yield(.state(state))
        let context = RunContext(frequencies: frequencies, settings: settings, listener: listener, seed: seed,
                                 maximumLevels: Dictionary(uniqueKeysWithValues: frequencies.map { ($0, maximum($0)) }))
        Task { await run(test, context) }
    }

    /// How long after a response window's end (on the runner's clock) the progress is reported.
    static let reportMargin: Duration = .milliseconds(50)

    /// The random streams of a test's seed (`HearingTestRandom.stream`).
    static let catchTrialStream: UInt64 = 1
    static let gapStream: UInt64 = 2

    /// What a test runs with besides its procedure.
    private struct RunContext: Sendable {
        var frequencies: [Double]
        var settings: HearingTestSettings
        var listener: String?
        var seed: UInt64
        var maximumLevels: [Double: Double]
    }

    /// The last finished test's record (nil before the first), and whether it became the
    /// hearing profile.
    public var lastResult: (record: HearingTestRecord, applied: Bool)? { shared.withLock { $0.last } }

    /// The last finished test's audiogram as an HL7 FHIR R4 Observation (compact JSON,
    /// `HearingTestFHIR`); nil before the first test.
    public var lastExport: String? { lastResult.map { HearingTestFHIR.observationText($0.record) } }

    /// Applies the last finished test's result as the hearing profile, whatever the gate said
    /// (a person decided so: `/test/submit`). Throws while a test runs, without a finished
    /// test, or when the profile refuses it.
    public func submitLast() async throws {
        let record = try shared.withLock { shared -> HearingTestRecord in
            guard !shared.state.isActive else { throw ControlError("a hearing test is running: /test/submit applies a finished one") }
            guard let last = shared.last else { throw ControlError("no finished hearing test to submit") }
            return last.record
        }
        if let refusal = await submit(record) { throw ControlError(refusal) }
        shared.withLock { shared in
            shared.last?.applied = true
            if case .done = shared.state { shared.state = .done(profileRefusal: nil) }
        }
        subscribers.yield(.submitted)
        subscribers.yield(.state(state))
    }

    /// The listener pressed: counts for the presentation whose window is open, else is a false
    /// alarm. Throws when no test is running.
    public func heard() throws {
        try shared.withLock { shared in
            guard case .running = shared.state else { throw ControlError("no hearing test is running") }
            let now = ContinuousClock.now
            if let window = shared.window, window.opens <= now, now <= window.closes {
                shared.heardInWindow = true
                if shared.firstPress == nil { shared.firstPress = now }
            } else {
                shared.pressesOutsideWindows += 1
            }
        }
    }

    /// Pauses: the tone stops, the presentation under way will be repeated.
    public func pause() throws {
        try shared.withLock { shared in
            guard case .running = shared.state else { throw ControlError("no hearing test is running") }
            shared.control = .pause
            shared.runningBeforePause = shared.state
            shared.state = .paused
            shared.window = nil
        }
        runtime.engine.stopTone()
        runtime.engine.setMasking(nil)
        subscribers.yield(.state(.paused))
    }

    /// Resumes a paused test.
    public func resume() throws {
        let running = try shared.withLock { shared -> HearingTestState in
            guard case .paused = shared.state else { throw ControlError("the hearing test is not paused") }
            shared.control = .run
            shared.state = shared.runningBeforePause ?? .paused
            return shared.state
        }
        subscribers.yield(.state(running))
    }

    /// Cancels the test: nothing is submitted, the interruption is resolved.
    public func cancel() throws {
        try shared.withLock { shared in
            guard shared.state.isActive else { throw ControlError("no hearing test is running") }
            shared.control = .cancel
            shared.window = nil
        }
        runtime.engine.stopTone()
    }

    // MARK: The test

    private func run(_ initial: PureToneAudiometry, _ context: RunContext) async {
        var test = initial
        let settings = context.settings
        let timing = settings.timing
        let calibration = ToneCalibration(fullScaleSPL: fullScaleSPL, earphone: settings.earphone, corrections: runtime.calibrationTable)
        var gaps = HearingTestRandom.stream(Self.gapStream, seed: context.seed)
        var presentations: [HearingTestRecord.Presentation] = []
        let clock = ContinuousClock()
        while let trial = test.currentTrial {
            // The noise of a masked series stays on through its gaps and catch trials: its onset
            // comes with the series' first gap, never with a tone.
            let masking = trial.maskingLevel.map {
                MaskingNoise(frequency: trial.frequency, ear: trial.ear == .left ? .right : .left,
                             amplitude: calibration.maskingAmplitude(effectiveMasking: $0, frequency: trial.frequency,
                                                                     ear: trial.ear == .left ? .right : .left))
            }
            if masking != runtime.engine.masking { runtime.engine.setMasking(masking) }
            // The presentation is scheduled here: nothing is reported until its window closes.
            let gap = Double.random(in: timing.gapMinimum...timing.gapMaximum, using: &gaps)
            switch await wait(until: clock.now + .seconds(gap)) {
            case .elapsed: break
            case .resumed: continue
            case .cancelled: return await finish(Self.cancelled(after: presentations))
            case .failed(let reason): return await finish(.failed(reason: reason))
            }
            var onset = clock.now
            var fullScaleLevel: Double?
            if let level = trial.level {
                // The tone's amplitude at this ear and frequency, through the calibration.
                let amplitude = calibration.amplitude(hearingLevel: level, frequency: trial.frequency, ear: trial.ear)
                fullScaleLevel = 20 * log10(amplitude)
                let tone = ToneStimulus.Tone(
                    frequency: trial.frequency, amplitude: amplitude,
                    ear: trial.ear == .left ? .left : .right, seconds: timing.toneSeconds, isPulsed: settings.isPulsed)
                let number = runtime.engine.play(tone)
                switch await waitForOnset(of: number, clock: clock) {
                case .elapsed: onset = clock.now
                case .resumed: continue
                case .cancelled: return await finish(Self.cancelled(after: presentations))
                case .failed(let reason): return await finish(.failed(reason: reason))
                }
            }
            let onsetTime = Date()
            shared.withLock { shared in
                shared.window = (onset + .seconds(timing.windowStart), onset + .seconds(timing.windowEnd))
                shared.heardInWindow = false
                shared.firstPress = nil
            }
            // Past the window's end by `reportMargin` before anything is reported: the onset here is
            // when the runner saw the audio thread start the tone, a few ms after the audio onset.
            switch await wait(until: onset + .seconds(max(timing.toneSeconds, timing.windowEnd)) + Self.reportMargin) {
            case .elapsed: break
            case .resumed: continue
            case .cancelled: return await finish(Self.cancelled(after: presentations))
            case .failed(let reason): return await finish(.failed(reason: reason))
            }
            let (heard, firstPress, outside) = shared.withLock { shared in
                defer {
                    shared.window = nil
                    shared.firstPress = nil
                    shared.pressesOutsideWindows = 0
                }
                return (shared.heardInWindow, shared.firstPress, shared.pressesOutsideWindows)
            }
            presentations.append(HearingTestRecord.Presentation(
                time: onsetTime, ear: trial.ear, frequency: trial.frequency, level: trial.level,
                fullScaleLevel: fullScaleLevel, maskingLevel: trial.maskingLevel, isRetest: trial.isRetest,
                heard: heard, latency: firstPress.map { Self.seconds($0 - onset) }))
            for _ in 0..<outside { test.recordPressOutsideWindows() }
            test.record(heard: heard)
            reportProgress(test)
        }
        let record = HearingTestRecord(
            date: Date(), frequencies: context.frequencies, settings: settings, calibration: fullScaleSPL,
            results: test.results, softwareVersion: SoundFitVersion.current, sampleRate: runtime.engine.sampleRate,
            seed: context.seed, listener: context.listener, maximumLevels: context.maximumLevels,
            presentations: presentations, calibrationTable: runtime.calibrationTable)
        await finish(.done(record))
    }

    /// The ending of a test cancelled after `presentations`: how many, and how many answered.
    private static func cancelled(after presentations: [HearingTestRecord.Presentation]) -> Ending {
        .cancelled(presentations: presentations.count, heard: presentations.filter(\.heard).count)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Reports `running` (the next presentation's ear and frequency, the progress) after a
    /// response window closed: every presentation, tone or catch trial, gets the same report at
    /// the same moment of its course, before the next one is scheduled.
    private func reportProgress(_ test: PureToneAudiometry) {
        guard let next = test.currentTrial else { return }
        let running = HearingTestState.running(ear: next.ear, frequency: next.frequency, progress: test.progress)
        let changed = shared.withLock { shared -> Bool in
            // Paused or ending: the state is not the presentation's to change.
            guard case .running = shared.state else { return false }
            shared.state = running
            return true
        }
        if changed { subscribers.yield(.state(running)) }
    }

    /// Waits until `deadline` in small steps, following pause, cancel and the session.
    private func wait(until deadline: ContinuousClock.Instant) async -> Wait {
        while ContinuousClock.now < deadline {
            if let interrupted = await checkControl() { return interrupted }
            try? await Task.sleep(for: min(.milliseconds(5), deadline - ContinuousClock.now))
        }
        return await checkControl() ?? .elapsed
    }

    /// Waits until the audio thread started tone `number`.
    private func waitForOnset(of number: UInt64, clock: ContinuousClock) async -> Wait {
        let deadline = clock.now + Self.onsetTimeout
        while !runtime.engine.hasStarted(tone: number) {
            if let interrupted = await checkControl() { return interrupted }
            guard clock.now < deadline else {
                return .failed(runtime.isAudioSystemConnected
                    ? "the audio engine did not start the tone (is the JACK server running?)" : "JACK server lost")
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return .elapsed
    }

    /// Nil to go on; otherwise why the presentation under way ends. A pause waits here until
    /// resumed or cancelled.
    private func checkControl() async -> Wait? {
        if let failure = sessionFailure() { return .failed(failure) }
        switch shared.withLock({ $0.control }) {
        case .run: return nil
        case .cancel: return .cancelled
        case .pause:
            while true {
                try? await Task.sleep(for: .milliseconds(5))
                if let failure = sessionFailure() { return .failed(failure) }
                switch shared.withLock({ $0.control }) {
                case .pause: continue
                case .cancel: return .cancelled
                case .run: return .resumed
                }
            }
        }
    }

    /// Why the test cannot go on: no session (the JACK server lost, or deactivated).
    private func sessionFailure() -> String? {
        guard runtime.controller.session == nil else { return nil }
        return runtime.isAudioSystemConnected ? "the processing session ended" : "JACK server lost"
    }

    // MARK: Ending

    private enum Ending {
        case done(HearingTestRecord)
        case cancelled(presentations: Int, heard: Int)
        case failed(reason: String)
    }

    private func finish(_ ending: Ending) async {
        runtime.engine.stopTone()
        runtime.engine.setMasking(nil)
        runtime.engine.isInTestMode = false
        var final: HearingTestState
        switch ending {
        case .cancelled(let presentations, let heard): final = .cancelled(presentations: presentations, heard: heard)
        case .failed(let reason): final = .failed(reason: reason)
        case .done(let record):
            subscribers.yield(.results(record))
            keep(record)
            // The gate: only a result without problems becomes the profile by itself.
            let problems = record.problems
            let refusal = problems.isEmpty ? await submit(record)
                : "not applied (" + problems.joined(separator: "; ") + "): kept; /test/submit applies it"
            shared.withLock { $0.last = (record, refusal == nil) }
            final = .done(profileRefusal: refusal)
        }
        await resolveInterruption()
        shared.withLock { shared in
            shared.state = final
            shared.window = nil
        }
        subscribers.yield(.state(final))
    }

    /// The result as the hearing profile (an ear not tested keeps its audiogram); the reason
    /// when it cannot be one.
    private func submit(_ record: HearingTestRecord) async -> String? {
        do {
            let current = runtime.presets.profile
            var left = current?.left, right = current?.right
            for result in record.results {
                let audiogram = try Audiogram(result.profilePoints.map { ($0.frequency, $0.level) })
                if result.ear == .left { left = audiogram } else { right = audiogram }
            }
            try await runtime.submitProfile(try HearingProfile(left: left, right: right))
            return nil
        } catch {
            return "the result did not become the hearing profile: \(error)"
        }
    }

    /// Writes `record` to `hearing-tests/<date>.json` in the state directory, atomically.
    private func keep(_ record: HearingTestRecord) {
        guard let stateDirectory else { return }
        let directory = stateDirectory.appendingPathComponent("hearing-tests")
        let file = directory.appendingPathComponent(record.fileStem + ".json")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try AtomicFile.write(record.encoded(), to: file)
        } catch {
            subscribers.yield(.notKept("the hearing test result was not saved to \(file.path): \(error)"))
        }
    }

    /// Resolves the test's interruption, at once or when the next session starts.
    private func resolveInterruption() async {
        if let session = runtime.controller.session,
           let interrupted = try? await session.resolve(interruption: Self.interruptionReason) {
            subscribers.yield(.interrupted(interrupted))
            return
        }
        shared.withLock { $0.resolvePending = true }
        Task {
            while shared.withLock({ $0.resolvePending }) {
                if let session = runtime.controller.session,
                   let interrupted = try? await session.resolve(interruption: Self.interruptionReason) {
                    shared.withLock { $0.resolvePending = false }
                    subscribers.yield(.interrupted(interrupted))
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

/// One `HearingTestRunner.observeEvents` registration.
public struct HearingTestObservation: Sendable {
    fileprivate let registration: Subscribers<HearingTestEvent>.Observation
    fileprivate init(_ registration: Subscribers<HearingTestEvent>.Observation) { self.registration = registration }
}
