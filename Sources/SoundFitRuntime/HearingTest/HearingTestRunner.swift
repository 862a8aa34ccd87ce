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
/// For the whole test the session is interrupted (reason `hearing test`) and the engine is in
/// test mode. On completion the results are reported, kept in the state directory
/// (`hearing-tests/<date>.json`), become the hearing profile through `submitProfile` (presets and
/// recommendation, as `/profile/audiogram`), and the interruption is resolved. Cancelled or
/// failed, nothing is submitted. The session ending (the JACK server lost, a deactivation) fails
/// the test; the interruption is then resolved as soon as a session is active again.
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
        var pressesOutsideWindows = 0
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

    // MARK: Requests

    /// Starts a test of `ears` at `frequencies` (standard audiometric frequencies within
    /// 125…8000 Hz): interrupts the session and puts the engine in test mode. Throws when a test
    /// runs, without a session, or for a frequency the profile could not hold.
    public func start(ears: [Ear], frequencies: [Double] = PureToneAudiometry.defaultFrequencies) async throws {
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
        let test = try PureToneAudiometry(.init(ears: ears, frequencies: frequencies, maximumLevel: maximum))
        guard let session = runtime.controller.session else {
            throw ControlError("no processing session is active: the hearing test needs the JACK connection")
        }
        guard let trial = test.currentTrial else { return }
        let level = trial.level ?? 0
        try shared.withLock { shared in
            guard !shared.state.isActive else { throw ControlError("a hearing test is already running (/test/cancel it first)") }
            shared.state = .running(ear: trial.ear, frequency: trial.frequency, level: level, progress: 0)
            shared.control = .run
            shared.window = nil
            shared.heardInWindow = false
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
        Task { await run(test, frequencies: frequencies, settings: settings) }
    }

    /// The listener pressed: counts for the presentation whose window is open, else is a false
    /// alarm. Throws when no test is running.
    public func heard() throws {
        try shared.withLock { shared in
            guard case .running = shared.state else { throw ControlError("no hearing test is running") }
            let now = ContinuousClock.now
            if let window = shared.window, window.opens <= now, now <= window.closes {
                shared.heardInWindow = true
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

    private func run(_ initial: PureToneAudiometry, frequencies: [Double], settings: HearingTestSettings) async {
        var test = initial
        let timing = settings.timing
        let calibration = ToneCalibration(fullScaleSPL: fullScaleSPL, earphone: settings.earphone, corrections: runtime.calibrationTable)
        let clock = ContinuousClock()
        while let trial = test.currentTrial {
            let masking = trial.maskingLevel.map { MaskingNoise(frequency: trial.frequency, ear: trial.ear == .left ? .right : .left, amplitude: calibration.maskingAmplitude(effectiveMasking: $0, frequency: trial.frequency)) }
            if masking != runtime.engine.masking { runtime.engine.setMasking(masking) }
            let gap = Double.random(in: timing.gapMinimum...timing.gapMaximum)
            switch await wait(until: clock.now + .seconds(gap)) {
            case .elapsed: break
            case .resumed: continue
            case .cancelled: return await finish(.cancelled)
            case .failed(let reason): return await finish(.failed(reason: reason))
            }
            announce(trial, test: test)
            var onset = clock.now
            if let level = trial.level {
                let tone = ToneStimulus.Tone(
                    frequency: trial.frequency, amplitude: calibration.amplitude(hearingLevel: level, frequency: trial.frequency, ear: trial.ear),
                    ear: trial.ear == .left ? .left : .right, seconds: timing.toneSeconds, isPulsed: settings.isPulsed)
                let number = runtime.engine.play(tone)
                switch await waitForOnset(of: number, clock: clock) {
                case .elapsed: onset = clock.now
                case .resumed: continue
                case .cancelled: return await finish(.cancelled)
                case .failed(let reason): return await finish(.failed(reason: reason))
                }
            }
            shared.withLock { shared in
                shared.window = (onset + .seconds(timing.windowStart), onset + .seconds(timing.windowEnd))
                shared.heardInWindow = false
            }
            switch await wait(until: onset + .seconds(max(timing.toneSeconds, timing.windowEnd))) {
            case .elapsed: break
            case .resumed: continue
            case .cancelled: return await finish(.cancelled)
            case .failed(let reason): return await finish(.failed(reason: reason))
            }
            let (heard, outside) = shared.withLock { shared in
                defer {
                    shared.window = nil
                    shared.pressesOutsideWindows = 0
                }
                return (shared.heardInWindow, shared.pressesOutsideWindows)
            }
            for _ in 0..<outside { test.recordPressOutsideWindows() }
            test.record(heard: heard)
        }
        let record = HearingTestRecord(date: Date(), frequencies: frequencies, settings: settings,
                                       calibration: fullScaleSPL, results: test.results)
        await finish(.done(record))
    }

    /// Reports `running` when the ear, frequency or level changes (catch trials are not announced).
    private func announce(_ trial: PureToneAudiometry.Trial, test: PureToneAudiometry) {
        guard let level = trial.level else { return }
        let running = HearingTestState.running(ear: trial.ear, frequency: trial.frequency, level: level, progress: test.progress)
        let changed = shared.withLock { shared -> Bool in
            // Paused or ending: the state is not the presentation's to change.
            guard case .running(let ear, let frequency, let current, _) = shared.state else { return false }
            guard ear != trial.ear || frequency != trial.frequency || current != level else { return false }
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
        case cancelled
        case failed(reason: String)
    }

    private func finish(_ ending: Ending) async {
        runtime.engine.stopTone()
        runtime.engine.setMasking(nil)
        runtime.engine.isInTestMode = false
        var final: HearingTestState
        switch ending {
        case .cancelled: final = .cancelled
        case .failed(let reason): final = .failed(reason: reason)
        case .done(let record):
            subscribers.yield(.results(record))
            keep(record)
            final = .done(profileRefusal: await submit(record))
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
