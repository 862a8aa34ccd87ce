import Foundation
import Synchronization
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitState

/// Calibration you can do with a sound level meter: plays a steady tone of a nominal dB SPL on
/// one ear's channels (`play`), records what the meter on an artificial ear or coupler read
/// while it played (`measured`), and keeps the resulting corrections (the runtime's
/// `calibrationTable`) with the earphone table in `calibration.json` in the state directory.
///
/// The tone is the engine's test stimulus in test mode (the output plays nothing else while it
/// sounds), through the calibration, the earphone-independent dB SPL and that ear's correction:
/// `dBFS = nominal − calibration − correction(ear, hz)`. A level above the output safety limit,
/// or one the output cannot reach unclipped, is refused with the limit named. The tone and a
/// hearing test exclude each other (`busyReason` is the hearing test's refusal).
///
/// Thread rules: any thread except the audio thread.
public final class Calibrator: Sendable {
    /// How long a calibration tone lasts at most without `/calibration/stop`: long enough for a
    /// meter reading, short enough that a forgotten tone ends.
    public static let toneSeconds = 600.0

    /// The tone playing, or the last one played (what `measured` refers to).
    public struct Tone: Sendable, Equatable {
        public var ear: Ear
        public var frequency: Double
        /// dB SPL meant at the ear.
        public var level: Double
        /// The dBFS peak played for it (through the correction in force then).
        public var fullScaleLevel: Double
    }

    private let runtime: SoundFitRuntime
    private let stateDirectory: URL?
    private let shared = Mutex(Shared())

    private struct Shared {
        var playing: Tone?
        /// The last tone played per ear and frequency: what a reading refers to.
        var played: [String: Tone] = [:]
        var earphone: EarphoneTable = .tdh39
    }

    /// `stateDirectory`: where `calibration.json` is kept (nil: nowhere).
    public init(runtime: SoundFitRuntime, stateDirectory: URL? = nil) {
        self.runtime = runtime
        self.stateDirectory = stateDirectory
    }

    /// The tone playing, if any.
    public var playing: Tone? { shared.withLock { $0.playing } }

    /// Why a hearing test cannot start now (a calibration tone plays), else nil.
    public var busyReason: String? {
        guard let tone = playing else { return nil }
        return "a calibration tone is playing (\(tone.ear.rawValue), \(Self.format(tone.frequency)) Hz); /calibration/stop it first"
    }

    /// Plays a steady tone of `level` dB SPL at `frequency` on `ear` until `stop()`, replacing
    /// a calibration tone playing. `hearingTestRunning`: refused while a hearing test runs.
    @discardableResult
    public func play(ear: Ear, frequency: Double, level: Double, hearingTestRunning: Bool) throws -> Tone {
        guard !hearingTestRunning else { throw ControlError("a hearing test is running: no calibration tone until it ends") }
        guard frequency.isFinite, CalibrationTable.frequencyRange.contains(frequency) else {
            throw ControlError(CalibrationTableError.badFrequency(frequency).description)
        }
        guard level.isFinite, CalibrationTable.levelRange.contains(level) else {
            throw ControlError(CalibrationTableError.badLevel(name: "nominal", level: level).description)
        }
        guard runtime.isAudioSystemConnected else {
            throw ControlError("not connected to JACK: the calibration tone needs the audio engine")
        }
        let limit = runtime.effectiveMaximumOutputSPL
        guard level <= limit else {
            throw ControlError("\(Self.format(level)) dB SPL is above the output safety limit \(Self.format(limit)) dB SPL "
                + "(--max-output, /config/max_output)")
        }
        let calibration = ToneCalibration(fullScaleSPL: runtime.calibration, corrections: runtime.calibrationTable)
        let dBFS = calibration.fullScaleLevel(soundPressureLevel: level, frequency: frequency, ear: ear)
        let highest = min(0, runtime.outputLimitDBFS)
        guard dBFS <= highest + 1e-9 else {
            let reachable = level - (dBFS - highest)
            throw ControlError("\(Self.format(level)) dB SPL at \(Self.format(frequency)) Hz on the \(ear.rawValue) ear needs "
                + "\(Self.format(dBFS)) dBFS, above the output's \(Self.format(highest)) dBFS (full scale and the output "
                + "safety limit); the most it plays there is \(Self.format(reachable)) dB SPL")
        }
        let tone = Tone(ear: ear, frequency: frequency, level: level, fullScaleLevel: dBFS)
        shared.withLock { shared in
            shared.playing = tone
            shared.played[Self.key(ear, frequency)] = tone
        }
        runtime.engine.isInTestMode = true
        _ = runtime.engine.play(ToneStimulus.Tone(frequency: frequency, amplitude: pow(10, dBFS / 20),
                                                   ear: ear == .left ? .left : .right, seconds: Self.toneSeconds))
        return tone
    }

    /// Stops the calibration tone and leaves test mode; throws when none plays.
    public func stop() throws {
        let wasPlaying = shared.withLock { shared -> Bool in
            defer { shared.playing = nil }
            return shared.playing != nil
        }
        guard wasPlaying else { throw ControlError("no calibration tone is playing") }
        runtime.engine.stopTone()
        runtime.engine.isInTestMode = false
    }

    /// Stops a tone playing, if any (a client gone, shutting down).
    public func stopIfPlaying() { try? stop() }

    /// Records that the meter read `measured` dB SPL while the last tone at `ear` and
    /// `frequency` played: the correction there becomes what it was plus `measured − nominal`,
    /// the output limit follows, and the table is saved. A tone still playing there is played
    /// again through the new correction (the meter should now read the nominal level). Returns
    /// the new correction.
    @discardableResult
    public func measured(ear: Ear, frequency: Double, level: Double) async throws -> Double {
        guard let tone = shared.withLock({ $0.played[Self.key(ear, frequency)] }) else {
            throw ControlError("no calibration tone was played on the \(ear.rawValue) ear at \(Self.format(frequency)) Hz: "
                + "play one with /calibration/tone first, then read the meter")
        }
        var table = runtime.calibrationTable
        let correction: Double
        do {
            correction = try table.record(ear: ear, frequency: frequency, nominal: tone.level, measured: level)
        } catch {
            throw ControlError(error.description)
        }
        var failure: (any Error)?
        do {
            try await runtime.setCalibrationTable(table)
        } catch {
            failure = error  // the table is set; the preset could not be applied
        }
        shared.withLock { $0.played[Self.key(ear, frequency)] = nil }
        try save()
        if let playing, playing.ear == ear, playing.frequency == frequency {
            do {
                try play(ear: ear, frequency: frequency, level: playing.level, hearingTestRunning: false)
            } catch {
                // Through the new correction the level is out of reach: no tone at the old level.
                stopIfPlaying()
                throw ControlError("the correction is kept, but the tone stopped: \(error)")
            }
        }
        if let failure { throw failure }
        return correction
    }

    /// Clears the calibration table (and saves).
    public func reset() async throws {
        var failure: (any Error)?
        do {
            try await runtime.setCalibrationTable(CalibrationTable())
        } catch {
            failure = error
        }
        shared.withLock { $0.played = [:] }
        try save()
        if let failure { throw failure }
    }

    // MARK: Keeping

    /// The earphone table kept with the calibration (the hearing test's, set by its owner).
    public var earphone: EarphoneTable {
        get { shared.withLock { $0.earphone } }
        set { shared.withLock { $0.earphone = newValue } }
    }

    /// What `calibration.json` holds now.
    public var state: CalibrationState {
        CalibrationState(earphone: earphone, table: runtime.calibrationTable)
    }

    /// Takes over a kept state (at start): the table into the runtime, the earphone here.
    public func restore(_ state: CalibrationState) {
        runtime.restoreCalibrationTable(state.table)
        earphone = state.earphone
    }

    /// Writes `calibration.json` atomically (nothing without a state directory).
    public func save() throws {
        guard let stateDirectory else { return }
        let url = stateDirectory.appendingPathComponent(CalibrationState.fileName)
        do {
            try AtomicFile.write(state.encoded(), to: url)
        } catch {
            throw ControlError("the calibration was not saved to \(url.path): \(error)")
        }
    }

    private static func key(_ ear: Ear, _ frequency: Double) -> String { "\(ear.rawValue) \(frequency)" }

    /// `100` for whole numbers, `92.5` otherwise (one decimal).
    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() && abs(rounded) < 1e9 ? String(Int(rounded)) : String(rounded)
    }
}
