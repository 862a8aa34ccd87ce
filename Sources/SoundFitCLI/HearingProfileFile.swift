import Foundation
import SoundFitHearing

/// Reads a hearing profile JSON file for `run --profile` and `presets --audiogram`.
enum HearingProfileFile {
    static func load(_ path: String) throws -> HearingProfile {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CLIError("cannot read the hearing profile \(path): \(error.localizedDescription)")
        }
        do {
            return try HearingProfile.decode(data, file: path)
        } catch {
            throw CLIError("hearing profile \(error)")
        }
    }
}

/// Reads an earphone RETSPL table for `run --earphone`.
enum EarphoneFile {
    static func load(_ path: String) throws -> EarphoneTable {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CLIError("cannot read the earphone table \(path): \(error.localizedDescription)")
        }
        do {
            return try EarphoneTable.decode(data, file: path)
        } catch {
            throw CLIError("earphone table \(error)")
        }
    }
}
