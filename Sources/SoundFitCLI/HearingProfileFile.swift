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
