import CRealtimeSupport
import Foundation
import Synchronization
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState

/// SoundFit without JACK or OSC, for `soundfit render`: the engine, runtime and state keeper of
/// `SoundFitApplication`, set up the way `soundfit run` sets them up (state, then hearing
/// profile, then patch, then single values), with the engine run by an `InMemoryDriver`
/// instead of the JACK process callback. What it renders is what a running SoundFit with the
/// same settings plays, sample for sample.
///
/// - While it is being configured, a thread of its own renders silent cycles, as JACK would
///   (the runtime applies every change through the engine and waits for the audio side).
/// - Then that thread stops and `render` takes over the same renderer on the caller's thread:
///   `settle()` gives it a defined start (filter states cleared, ramps at their targets, the ring
///   modulator at phase 0, then `settleSeconds` of silence for the level detectors), so the output
///   does not depend on how long the configuration took.
/// - An instance's state directory is only read (a read-only `DurableStateStore`): rendering
///   never changes a running instance's state.
///
/// Thread rules: create, configure and render from one task; not for concurrent use.
public final class OfflineSoundFit: @unchecked Sendable {
    /// The settings to render with, as `soundfit render` takes them.
    public struct Settings: Sendable {
        /// An instance's state directory, read for its full state; nil: the defaults.
        public var stateDirectory: URL?
        /// Factory and user patches.
        public var patches: PatchLibrary
        /// A state to start from instead of the state directory's (a running instance's
        /// `StateKeeper.document`, for `GET /verify`); nil: the state directory's, else the defaults.
        public var document: StateDocument?
        /// The session; nil: the state's (or the default: fine tuning at tech level 3).
        public var session: ProcessingConfiguration?
        /// A hearing profile that replaces the state's (its recommendation is applied).
        public var hearingProfile: HearingProfile?
        /// A patch loaded after the profile.
        public var patch: PatchReference?
        /// Values set last, in order (validated against their entries).
        public var values: [(address: String, value: ParameterValue)] = []
        /// The calibration (dB SPL of a full-scale sine).
        public var calibration = PresetGenerator.defaultCalibration
        /// The output safety limit, dB SPL through the calibration.
        public var maximumOutputSPL = SoundFitRuntime.defaultMaximumOutputSPL

        public init(stateDirectory: URL? = nil, patches: PatchLibrary) {
            self.stateDirectory = stateDirectory
            self.patches = patches
        }
    }

    /// Frames per cycle: the period of a typical JACK server.
    public static let blockSize = 256
    /// Silence rendered after the reset, before the input: long enough for the slowest level
    /// detector (tech level 4, 100 ms release) to fall from its start level to the floor of the
    /// gain law, as it has in a SoundFit that was idle before a sound arrived.
    public static let settleSeconds = 10.0

    public let sampleRate: Int
    public let channelCount: Int
    public let runtime: SoundFitRuntime
    public let stateKeeper: StateKeeper
    /// What the configuration had to say (a state restored from its previous copy, …).
    public private(set) var warnings: [String] = []
    private let settings: Settings
    private let audio: OfflineAudioThread

    /// Builds SoundFit for `sampleRate` and `channelCount` from `settings` (nothing runs yet).
    public init(settings: Settings, sampleRate: Int, channelCount: Int) {
        self.settings = settings
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        let descriptors = StateKeeper.writableDescriptors
        // Tech level 3 exists: `try!` cannot fail.
        let session = settings.session ?? .fineTuning(techLevel: try! TechLevel(3))
        var defaults = StateDocument.defaults(descriptors: descriptors, session: session)
        defaults.currentPatch = settings.patches.factoryPatches.first.map { CurrentPatch(number: $0.number, name: $0.name) }
        let store = DurableStateStore(directory: settings.stateDirectory ?? FileManager.default.temporaryDirectory,
                                      descriptors: descriptors, readOnly: true)
        var document = defaults
        if settings.stateDirectory != nil {
            let loaded = store.load(defaults: defaults)
            warnings += loaded.warnings
            document = loaded.document
        }
        if let given = settings.document { document = given }
        if let session = settings.session { document.session = session }
        if settings.hearingProfile != nil { document.forgetHearingProfile() }

        let engine = AudioEngine(settings: StateKeeper.chainSettings(document), techLevel: document.session.techLevel.value)
        runtime = SoundFitRuntime(engine: engine, sessionConfiguration: document.session,
                                  presets: ProfilePresetSource(calibration: settings.calibration),
                                  ceiling: OutputCeiling(maximumOutputSPL: settings.maximumOutputSPL, fullScaleSPL: settings.calibration))
        runtime.maximumOutputSPL = settings.maximumOutputSPL
        stateKeeper = StateKeeper(runtime: runtime, library: settings.patches, store: store, restoring: document) { _ in }
        audio = OfflineAudioThread(driver: InMemoryDriver(
            engine: engine, sampleRate: Double(sampleRate), blockSize: Self.blockSize, channelCount: channelCount),
            channelCount: channelCount)
    }

    /// Brings SoundFit to the settings: connects the session, submits the hearing profile, loads
    /// the patch and requests the values, each applied by the engine before the next. Throws
    /// the first refusal or failure (a `ControlError` or `ParameterError` naming it).
    public func configure() async throws {
        audio.startSilence()
        defer { audio.stopSilence() }
        try await runtime.audioSystemConnected(sampleRate: sampleRate)
        guard runtime.controller.session != nil else {
            throw ControlError("the processing session did not start")
        }
        if let profile = settings.hearingProfile {
            try await runtime.submitProfile(profile)
        }
        if let patch = settings.patch {
            _ = try await stateKeeper.loadPatch(patch)
        }
        var requests: [(any ControlParameter, ParameterValue)] = []
        for (address, value) in settings.values {
            guard let control = runtime.parameter(at: address) else { throw ParameterError.unknownAddress(address) }
            try control.check(value)
            requests.append((control, value))
        }
        for (result, (control, _)) in zip(runtime.requestBatch(requests, origin: nil), requests) {
            let request = try result.get()
            var last: ParameterUpdateState<ParameterValue>?
            for await state in request.states { last = state }
            guard let last, last.name == .applied || last.name == .superseded else {
                throw ControlError("\(control.descriptor.address) was not applied: \(last?.reason ?? "no state")")
            }
        }
    }

    /// `inputs` (one array per channel, equal lengths) through the chain; successive calls
    /// continue the stream seamlessly. Call `settle()` once before the first. Flushes denormals
    /// on the calling thread, as JACK's audio thread does: call it from a thread of your own.
    public func render(_ inputs: [[Float]]) -> [[Float]] {
        audio.render(inputs)
    }

    /// Resets the chain and renders `settleSeconds` of silence (discarded): the defined start
    /// (see the type). Flushes denormals on the calling thread, like `render`.
    public func settle() {
        audio.settle(frames: Int(Self.settleSeconds * Double(sampleRate)) / Self.blockSize * Self.blockSize)
    }
}

extension StateDocument {
    /// Drops the hearing profile and the session values that came with it: a hearing profile
    /// given at start replaces them (its recommendation follows).
    mutating func forgetHearingProfile() {
        hearingProfile = nil
        for address in parameters.keys where ParameterModel.entry(at: address)?.binding?.isSession == true {
            parameters[address] = nil
        }
    }
}

/// The in-memory driver and the thread that stands in for JACK's while SoundFit is configured:
/// it renders silent cycles, one about every millisecond, until stopped. Afterwards the driver
/// belongs to the caller of `render` (the stop waits for the thread to let go of it).
/// Denormals are flushed on both threads, as on JACK's.
final class OfflineAudioThread: @unchecked Sendable {
    private var driver: InMemoryDriver
    private let channelCount: Int
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var running = false

    init(driver: consuming InMemoryDriver, channelCount: Int) {
        self.driver = driver
        self.channelCount = channelCount
    }

    func startSilence() {
        guard !running else { return }
        running = true
        stopRequested.store(false, ordering: .relaxed)
        let thread = Thread { [self] in
            soundfit_enable_flush_denormals()
            while !stopRequested.load(ordering: .acquiring) {
                driver.renderSilentCycle()
                usleep(1000)
            }
            stopped.signal()
        }
        thread.name = "soundfit offline audio"
        thread.start()
    }

    func stopSilence() {
        guard running else { return }
        stopRequested.store(true, ordering: .releasing)
        stopped.wait()
        running = false
    }

    func settle(frames: Int) {
        precondition(!running, "the silence thread still runs")
        soundfit_enable_flush_denormals()
        driver.resetChain()
        let silence = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channelCount)
        _ = driver.render(silence)
    }

    func render(_ inputs: [[Float]]) -> [[Float]] {
        precondition(!running, "the silence thread still runs")
        soundfit_enable_flush_denormals()
        return driver.render(inputs).outputs
    }
}
