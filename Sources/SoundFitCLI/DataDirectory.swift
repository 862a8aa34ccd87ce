import Foundation

/// Finds the folders SoundFit ships beside its binary: `patches` (the factory patches) and `ui`
/// (the web page). One lookup for both, so a checkout, an installation by
/// `scripts/install.sh PREFIX` and a distribution package all work without settings.
enum DataDirectory {
    /// The folder `name`, searched in this order:
    /// 1. `<checkout>/<name>` when the executable lies inside a SoundFit checkout (a directory
    ///    above it holds `Package.swift`; `swift build` puts it in `.build/…/soundfit`);
    /// 2. `<exe>/../share/soundfit/<name>`: an installation under any prefix
    ///    (`PREFIX/bin/soundfit` and `PREFIX/share/soundfit/<name>`);
    /// 3. `/usr/share/soundfit/<name>`.
    /// The executable's path has its symbolic links resolved first. Nil when none exists.
    static func find(_ name: String) -> URL? {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binDirectory = executable.deletingLastPathComponent()
        var directory = binDirectory
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent(name, isDirectory: true)
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
               FileManager.default.fileExists(atPath: candidate.path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        let candidates = [
            binDirectory.deletingLastPathComponent().appendingPathComponent("share/soundfit/\(name)", isDirectory: true),
            URL(fileURLWithPath: "/usr/share/soundfit/\(name)", isDirectory: true),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }
}
