import Foundation

/// Finds a folder SoundFit ships beside its executable (the factory patches `patches`, the web
/// page `ui`), so a checkout, an installation by `scripts/install.sh PREFIX` and a distribution
/// package all work without settings. First match wins:
/// 1. the flag (`explicit`), else the environment variable;
/// 2. `<checkout>/<folder>` when the executable lies inside a SoundFit checkout (a directory
///    above it holds `Package.swift`; `swift build` puts it in `.build/…/soundfit`);
/// 3. `<exe>/../share/soundfit/<folder>`: an installation under any prefix (`PREFIX/bin/soundfit`
///    beside `PREFIX/share/soundfit/<folder>`);
/// 4. `/usr/share/soundfit/<folder>`.
/// The executable's path has its symbolic links resolved first. Nil when none exists.
enum ResourceDirectory {
    static func resolve(explicit: String?, environmentVariable: String, folder: String) -> URL? {
        if let explicit { return URL(fileURLWithPath: explicit, isDirectory: true) }
        if let environment = ProcessInfo.processInfo.environment[environmentVariable] {
            return URL(fileURLWithPath: environment, isDirectory: true)
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binDirectory = executable.deletingLastPathComponent()
        var directory = binDirectory
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent(folder, isDirectory: true)
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
               FileManager.default.fileExists(atPath: candidate.path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        let installed = [
            binDirectory.deletingLastPathComponent().appendingPathComponent("share/soundfit/\(folder)", isDirectory: true),
            URL(fileURLWithPath: "/usr/share/soundfit/\(folder)", isDirectory: true),
        ]
        return installed.first { FileManager.default.fileExists(atPath: $0.path) }
    }
}
