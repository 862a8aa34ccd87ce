import Foundation
import Glibc

/// Headless Chromium showing SoundFit's web surface, driven through selenium by
/// `Tests/Browser/web_surface_driver.py` (Debian's `chromium`, `chromium-driver` and
/// `python3-selenium`, the test packages of scripts/setup.sh). One JSON command per line on the
/// driver's stdin, one `reply <sequence> <json>` line back on its stdout.
final class BrowserDriver: @unchecked Sendable {
    private let process: ChildProcess
    private var sequence = 0

    /// The driver script, found from this file's place in the repository.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Browser/web_surface_driver.py").path

    /// Where the test run saves its screenshots: `.build/screenshots` of the package (gitignored).
    static let screenshots: URL = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent(".build/screenshots")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    /// Starts the driver and opens `url` in a `width`×`height` window; returns once the page has
    /// built its controls from the namespace.
    init(url: String, width: Int = 1280, height: Int = 800) throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw IntegrationError("\(tool) is missing: SOUNDFIT_SETUP_TESTS=1 scripts/setup.sh installs the test packages")
        }
        // A driver that died must not take the test process with it when the next command is written.
        signal(SIGPIPE, SIG_IGN)
        process = try ChildProcess(label: "web surface driver", executable: "/usr/bin/python3",
                                   arguments: [Self.script], input: true)
        _ = try call("open_page", ["url": url, "width": width, "height": height], timeout: .seconds(60))
    }

    /// Runs one driver command (a function of the driver script) and returns its result.
    @discardableResult
    func call(_ command: String, _ arguments: [String: Any] = [:], timeout: Duration = .seconds(45)) throws -> Any {
        var body = arguments
        body["command"] = command
        let line = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        let prefix = "reply \(sequence) "
        sequence += 1
        try process.writeLine(line)
        let reply = process.waitForOutput(timeout: timeout) { output in
            output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }
        guard let reply, let answer = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            throw IntegrationError("""
                no answer from the browser driver to \(line) (running: \(process.isRunning))
                stderr: \(process.standardError.suffix(3000))
                """)
        }
        guard answer["ok"] as? Bool == true else {
            throw IntegrationError("browser driver, \(command): \(answer["error"] ?? "failed")")
        }
        return answer["result"] ?? NSNull()
    }

    /// Saves a screenshot of the page as `.build/screenshots/<name>.png` and returns its path.
    @discardableResult
    func screenshot(_ name: String, width: Int? = nil, height: Int? = nil, full: Bool = false) throws -> String {
        let path = Self.screenshots.appendingPathComponent("\(name).png").path
        var arguments: [String: Any] = ["path": path, "full": full]
        if let width, let height { arguments["width"] = width; arguments["height"] = height }
        try call("screenshot", arguments)
        return path
    }

    func quit() {
        try? process.writeLine(#"{"command": "quit"}"#)
        if !process.waitForExit(timeout: .seconds(10)) { process.stop() }
    }

    deinit { quit() }
}
