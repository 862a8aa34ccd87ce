import Foundation

/// jackd2's command-line tools (`jack_connect`, `jack_disconnect`, `jack_property`, …) run as a
/// user would, against one server (`JACK_DEFAULT_SERVER`).
enum JackTools {
    /// Runs `/usr/bin/<tool> arguments…`; returns its standard output, or throws with its
    /// output when it fails.
    @discardableResult
    static func run(_ tool: String, server: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_DEFAULT_SERVER"] = server
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw IntegrationError("\(tool) \(arguments) failed with \(process.terminationStatus): \(text)\(errorText)")
        }
        return text
    }
}
