import Foundation

/// Finds a folder SoundFit ships beside its executable (the factory patches, the web page):
/// the flag, else the environment variable, else the folder of that name next to
/// `Package.swift` above the executable (a checkout's `.build/…/soundfit`), else
/// `/usr/share/soundfit/<folder>`.
enum ResourceDirectory {
    static func resolve(explicit: String?, environmentVariable: String, folder: String) -> URL? {
        if let explicit { return URL(fileURLWithPath: explicit, isDirectory: true) }
        if let environment = ProcessInfo.processInfo.environment[environmentVariable] {
            return URL(fileURLWithPath: environment, isDirectory: true)
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent(folder, isDirectory: true)
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
               FileManager.default.fileExists(atPath: candidate.path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        let installed = URL(fileURLWithPath: "/usr/share/soundfit/\(folder)", isDirectory: true)
        return FileManager.default.fileExists(atPath: installed.path) ? installed : nil
    }
}
