import Foundation

/// jackd2's command-line tools (`jack_connect`, `jack_disconnect`, `jack_property`, …) run as a
/// user would, against one server (`JACK_DEFAULT_SERVER`).
enum JackTools {
    /// Runs `/usr/bin/<tool> arguments…`; returns its standard output, or throws with its
    /// output when it fails or is still running after `timeout`.
    @discardableResult
    static func run(_ tool: String, server: String, _ arguments: String..., timeout: Duration = .seconds(300)) throws -> String {
        let (status, text, errorText) = try runToEnd(["/usr/bin/\(tool)"] + arguments, environment: ["JACK_DEFAULT_SERVER": server],
                                                     timeout: timeout)
        guard status == 0 else { throw IntegrationError("\(tool) \(arguments) failed with \(status): \(text)\(errorText)") }
        return text
    }
}

/// Runs `command` (its executable's full path first) to its end: its exit status and output.
func runToEnd(_ command: [String], environment: [String: String] = [:],
              timeout: Duration = .seconds(300)) throws -> (status: Int32, stdout: String, stderr: String) {
    try runToEnd(command[0], Array(command.dropFirst()), environment: environment, timeout: timeout)
}

/// Runs `executable arguments…` to its end, with `environment` over this process's and stdin
/// from /dev/null: its exit status and output. A command still running after `timeout` is
/// stopped, and the call throws. A JACK tool never starts a server of its own
/// (`JACK_NO_START_SERVER`): a test names the server it means, and one that is down is a
/// failure to see, not a reason for libjack to start another.
func runToEnd(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
              timeout: Duration = .seconds(300)) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try ChildProcess(label: URL(fileURLWithPath: executable).lastPathComponent, executable: executable,
                                 arguments: arguments, environment: ["JACK_NO_START_SERVER": "1"].merging(environment) { $1 })
    guard child.waitForExit(timeout: timeout) else {
        child.stop()
        throw IntegrationError("\(executable) \(arguments) did not end within \(timeout)")
    }
    return (child.termination?.status ?? -1, child.standardOutput, child.standardError)
}
