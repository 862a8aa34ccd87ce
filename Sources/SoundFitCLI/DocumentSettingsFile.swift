import Foundation
import Logging
import SoundFitState

/// `document.json` of a state directory: the document-level settings `soundfit run` starts with
/// where no flag says otherwise, and that `state export`/`import` carry the calibration of.
enum DocumentSettingsFile {
    static func url(_ stateDirectory: URL) -> URL {
        stateDirectory.appendingPathComponent(DocumentSettings.fileName)
    }

    /// The saved settings; the defaults when there are none or they cannot be read (with a
    /// warning naming the field at fault).
    static func load(_ stateDirectory: URL, logger: Logger) -> DocumentSettings {
        do {
            return try read(stateDirectory) ?? DocumentSettings()
        } catch {
            logger.warning("\(error); starting from the default document settings")
            return DocumentSettings()
        }
    }

    /// The saved settings, or nil when there is no file.
    static func read(_ stateDirectory: URL) throws -> DocumentSettings? {
        let url = url(stateDirectory)
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try DocumentSettings.decode(data, file: url.path)
    }
}
