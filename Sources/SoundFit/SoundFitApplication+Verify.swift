import Foundation
import Synchronization
import SoundFitRuntime
import SoundFitWeb

extension SoundFitApplication {
    /// The `GET /verify` route: `FittingVerification` on a copy of the running instance's
    /// current state (its state keeper's document), with
    /// its calibration and output limit, rendered offline on a thread of its own. One at a time:
    /// the render takes seconds of a core.
    static func verifyRoute(runtime: SoundFitRuntime, stateKeeper: StateKeeper?) -> HTTPRoute {
        let running = Mutex(false)
        return VerifyRoute.route { includeTones in
            guard running.withLock({ busy in
                if busy { return false }
                busy = true
                return true
            }) else {
                return .unavailable("a verification is already running; ask again when it has answered")
            }
            defer { running.withLock { $0 = false } }
            do {
                return .report(try await verifyCurrentFitting(runtime: runtime, stateKeeper: stateKeeper,
                                                              includeTones: includeTones).json)
            } catch let failure as FittingVerification.Failure {
                return .unavailable(failure.description)
            } catch {
                return .unavailable("the verification failed: \(error)")
            }
        }
    }

    /// The report of the current fitting (see `verifyRoute`). Any task; never the audio thread.
    static func verifyCurrentFitting(runtime: SoundFitRuntime, stateKeeper: StateKeeper?,
                                     includeTones: Bool) async throws -> FittingVerification.Report {
        guard runtime.presets.profile != nil else {
            throw FittingVerification.Failure("no hearing profile: nothing is prescribed to verify (submit one with /profile/audiogram)")
        }
        guard let stateKeeper else {
            throw FittingVerification.Failure("this instance keeps no state (no state directory): there is no current fitting to copy")
        }
        var settings = OfflineSoundFit.Settings(patches: stateKeeper.library)
        settings.document = stateKeeper.document
        settings.calibration = runtime.calibration
        settings.maximumOutputSPL = runtime.maximumOutputSPL
        let soundfit = OfflineSoundFit(settings: settings, sampleRate: FittingVerification.sampleRate, channelCount: 2)
        try await soundfit.configure()
        return try await withCheckedThrowingContinuation { continuation in
            // Its own thread: the render flushes denormals on it (not one of the shared pool's).
            let thread = Thread {
                continuation.resume(with: Result { try FittingVerification.run(soundfit, includeTones: includeTones) })
            }
            thread.name = "soundfit verify"
            thread.start()
        }
    }
}
