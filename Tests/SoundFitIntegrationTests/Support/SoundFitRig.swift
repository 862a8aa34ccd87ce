import Foundation
import Glibc

/// The `soundfit` executable built next to the test bundle.
enum SoundFitBinary {
    static func path() throws -> String {
        var candidates: [URL] = []
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(argument0.deletingLastPathComponent().appendingPathComponent("soundfit"))
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("soundfit"))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("soundfit"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        // Fallback: any build directory of the package (newest first).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var found: [(Date, String)] = []
        let scratch = (try? FileManager.default.contentsOfDirectory(atPath: root.path))?.filter { $0.hasPrefix(".build") } ?? []
        for directory in scratch {
            let base = root.appendingPathComponent(directory)
            var paths = [base.appendingPathComponent("debug/soundfit").path]
            for triple in (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? [] {
                paths.append(base.appendingPathComponent("\(triple)/debug/soundfit").path)
            }
            for path in paths where FileManager.default.isExecutableFile(atPath: path) {
                let attributes = try? FileManager.default.attributesOfItem(atPath: path)
                found.append((attributes?[.modificationDate] as? Date ?? .distantPast, path))
            }
        }
        guard let newest = found.max(by: { $0.0 < $1.0 }) else {
            throw IntegrationError("soundfit binary not found next to \(argument0.path) nor under \(root.path)/.build*")
        }
        return newest.1
    }
}

/// The fields of `soundfit ready osc=udp://127.0.0.1:PORT osc_tcp=tcp://127.0.0.1:PORT|off
/// http=http://127.0.0.1:PORT|off client=NAME server=SERVER channels=N`.
struct ReadyLine {
    var fields: [String: String]
    var oscPort: UInt16
    /// The OSC over TCP port; nil when it is off.
    var oscTCPPort: UInt16?
    /// The HTTP and WebSocket port (OSCQuery, the page); nil when it is off.
    var httpPort: UInt16?
    var client: String
    var server: String
    var channels: Int

    init?(_ line: Substring) {
        guard line.hasPrefix("soundfit ready ") else { return nil }
        var fields: [String: String] = [:]
        for token in line.split(separator: " ").dropFirst(2) {
            guard let equals = token.firstIndex(of: "=") else { continue }
            fields[String(token[..<equals])] = String(token[token.index(after: equals)...])
        }
        guard let osc = fields["osc"], osc.hasPrefix("udp://127.0.0.1:"),
              let port = UInt16(osc.dropFirst("udp://127.0.0.1:".count)),
              let client = fields["client"], let server = fields["server"],
              let channels = fields["channels"].flatMap({ Int($0) })
        else { return nil }
        self.fields = fields
        oscPort = port
        oscTCPPort = fields["osc_tcp"].flatMap { $0.hasPrefix("tcp://127.0.0.1:") ? UInt16($0.dropFirst("tcp://127.0.0.1:".count)) : nil }
        httpPort = fields["http"].flatMap {
            $0.hasPrefix("http://127.0.0.1:") ? UInt16($0.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }) : nil
        }
        self.client = client
        self.server = server
        self.channels = channels
    }

    /// The first ready line in `output`, if any.
    static func find(in output: String) -> ReadyLine? {
        output.split(separator: "\n").lazy.compactMap { ReadyLine($0) }.first
    }
}

/// A running `soundfit run` process: the one place the tests build its command line. The
/// state directory is its own (removed at `stop()`) unless the caller gives one (kept, so a
/// test can start the next `soundfit` on it).
final class SoundFitProcess: @unchecked Sendable {
    let process: ChildProcess
    let stateDirectory: URL
    private let ownsStateDirectory: Bool

    /// Starts `soundfit run --state-dir DIR [--osc-port 0] [--http-port 0] <arguments>` (`--osc-port 0`
    /// unless `defaults` is false; `--http-port 0` unless `httpDefault` is false or the arguments
    /// choose the HTTP port or turn it off, so parallel tests never share a port).
    /// `wrapper`: a command that runs soundfit elsewhere (`nsenter … --` into a network namespace).
    init(arguments: [String], stateDirectory: URL? = nil, defaults: Bool = true, httpDefault: Bool = true,
         environment: [String: String]? = nil, wrapper: [String] = []) throws {
        ownsStateDirectory = stateDirectory == nil
        let directory = try stateDirectory ?? UniqueName.temporaryDirectory("soundfit-state")
        self.stateDirectory = directory
        let http = !httpDefault || arguments.contains("--http-port") || arguments.contains("--no-http") ? [] : ["--http-port", "0"]
        let all = ["run", "--state-dir", directory.path] + (defaults ? ["--osc-port", "0"] : []) + http + arguments
        let command = wrapper + [try SoundFitBinary.path()] + all
        process = try ChildProcess(label: "soundfit", executable: command[0], arguments: Array(command.dropFirst()),
                                   environment: environment)
    }

    /// Waits for the ready line; throws with the process's output if it does not come.
    func waitForReady(timeout: Duration = .seconds(30)) throws -> ReadyLine {
        if let ready = process.waitForOutput(timeout: timeout, ReadyLine.find(in:)) { return ready }
        throw IntegrationError("""
            soundfit printed no ready line (running: \(process.isRunning), exit: \(String(describing: process.termination)))
            stdout: \(process.standardOutput)
            stderr: \(process.standardError)
            """)
    }

    /// The log (soundfit logs to stderr).
    var log: String { process.standardError }

    /// SIGTERM (a clean shutdown, which flushes the state), SIGKILL after a grace period; removes
    /// the state directory when it is this process's own.
    func stop() {
        process.stop()
        if ownsStateDirectory { try? FileManager.default.removeItem(at: stateDirectory) }
    }

    /// `kill -9`: no shutdown code runs.
    func kill9() {
        process.send(SIGKILL)
        process.waitForExit(timeout: .seconds(10))
    }

    deinit { stop() }
}

/// A `soundfit run` on a test jackd that is ready: its ready line read, its `/ping` answered
/// and (unless told not to) its processing session active. Every rig that runs the binary on a
/// test jackd starts it here.
final class SoundFitInstance: @unchecked Sendable {
    let soundfit: SoundFitProcess
    let ready: ReadyLine
    let osc: OSCTestClient
    var process: ChildProcess { soundfit.process }

    /// Starts `soundfit run … --server NAME [--no-start-server] --channels N <arguments>` on
    /// `stateDirectory` (nil: its own); `--no-start-server` unless `mayStartServer`.
    init(server: TestJackServer, stateDirectory: URL? = nil, channels: Int = 2, arguments: [String] = [],
         waitForSession: Bool = true, mayStartServer: Bool = false) throws {
        let soundfit = try SoundFitProcess(
            arguments: ["--server", server.name] + (mayStartServer ? [] : ["--no-start-server"])
                + ["--channels", "\(channels)"] + arguments,
            stateDirectory: stateDirectory)
        self.soundfit = soundfit
        do {
            ready = try soundfit.waitForReady()
            osc = try OSCTestClient(port: ready.oscPort)
            try osc.ping()
            // The ready line can come before the processing session is active (it follows the
            // JACK connection asynchronously); session-bound requests fail until then.
            if waitForSession { try osc.waitForSession() }
        } catch {
            soundfit.stop()
            throw error
        }
    }

    /// The log (soundfit logs to stderr).
    var log: String { soundfit.log }

    /// SIGTERM (a clean shutdown, which flushes the state), SIGKILL after a grace period.
    func stop() { soundfit.stop() }

    /// `kill -9`: no shutdown code runs.
    func kill9() { soundfit.kill9() }
}

/// A test jackd, the real soundfit binary connected to it (on a state directory of its own),
/// an OSC client and (on demand) a test JACK client patched around soundfit. `stop()` (or
/// deinit) tears everything down.
final class SoundFitRig: @unchecked Sendable {
    let server: TestJackServer
    let instance: SoundFitInstance
    var soundfit: SoundFitProcess { instance.soundfit }
    var ready: ReadyLine { instance.ready }
    var osc: OSCTestClient { instance.osc }
    let channels: Int
    private(set) var audioClient: TestJackClient?

    init(channels: Int = 2, extraArguments: [String] = [], period: Int = 256, realtime: Bool = true,
         mayStartServer: Bool = true) throws {
        let server = try TestJackServer(period: period, realtime: realtime)
        self.server = server
        self.channels = channels
        do {
            instance = try SoundFitInstance(server: server, channels: channels, arguments: extraArguments,
                                           mayStartServer: mayStartServer)
        } catch {
            server.stop()
            throw error
        }
    }

    /// The test client, connected to soundfit's ports (created on first use).
    func audio() throws -> TestJackClient {
        if let audioClient { return audioClient }
        let client = try TestJackClient(server: server.name, channels: channels)
        audioClient = client
        try client.connect(toClient: ready.client)
        return client
    }

    /// Closes the test client (before the server goes away).
    func closeAudio() {
        audioClient?.close()
        audioClient = nil
    }

    func stop() {
        closeAudio()
        instance.stop()
        server.stop()
    }

    deinit { stop() }
}
