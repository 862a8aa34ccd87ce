import Foundation

/// jackd2's command-line tools (`jack_connect`, `jack_disconnect`, `jack_property`, …) run as a
/// user would, against one server (`JACK_DEFAULT_SERVER`).
enum JackTools {
    /// Runs `/usr/bin/<tool> arguments…`; returns its standard output, or throws with its
    /// output when it fails.
    @discardableResult
    static func run(_ tool: String, server: String, _ arguments: String...) throws -> String {
        let (status, text, errorText) = try runToEnd(["/usr/bin/\(tool)"] + arguments, environment: ["JACK_DEFAULT_SERVER": server])
        guard status == 0 else { throw IntegrationError("\(tool) \(arguments) failed with \(status): \(text)\(errorText)") }
        return text
    }
}

/// Runs `command` (its executable's full path first) to its end with Foundation's `Process`
/// (no `setpriv` wrapper, unlike `ChildProcess`), with `environment` over this process's and
/// stdin from /dev/null: its exit status and output.
func runToEnd(_ command: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text, errorText)
}
