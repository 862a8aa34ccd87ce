import Foundation
import Logging
import SoundFitHearing
import SoundFitRuntime
import SoundFitState

extension SoundFitApplication {
    /// Takes over the calibration kept in the state directory (`calibration.json`): its table
    /// goes to the runtime, and its earphone table is the hearing test's unless `--earphone`
    /// gave one. Returns the earphone table to start with. A file that cannot be read is logged
    /// and ignored (the defaults: no correction, the configured earphone).
    static func restoreCalibration(_ calibrator: Calibrator, configuration: SoundFitConfiguration, logger: Logger) -> EarphoneTable {
        var earphone = configuration.earphone
        if let directory = configuration.persistence?.stateDirectory {
            do {
                if let state = try CalibrationState.load(from: directory) {
                    calibrator.restore(state)
                    if !configuration.earphoneIsExplicit { earphone = state.earphone }
                    logger.info("calibration restored: earphone \(earphone.name), \(state.table.left.count) left and \(state.table.right.count) right corrections")
                }
            } catch {
                logger.warning("\(CalibrationState.fileName) ignored: \(error)")
            }
        }
        calibrator.earphone = earphone
        return earphone
    }
}
