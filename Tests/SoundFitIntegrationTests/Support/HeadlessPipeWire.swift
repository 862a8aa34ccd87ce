import Foundation
import Glibc

/// A PipeWire of the test's own: a private D-Bus session bus, `pipewire` and `wireplumber` with a
/// runtime directory of their own (so nothing reaches a user's session and several runs never
/// meet), and a null sink (`sfnull`, two channels) as the only device. JACK clients reach it
/// through PipeWire's libjack: `environment` holds what `pw-jack` would set, plus the runtime
/// directory and bus.
///
/// `stop()` ends PipeWire and WirePlumber (the bus stays), `start()` brings them back, as a
/// user restarting PipeWire would; `close()` (or deinit) ends everything.
final class HeadlessPipeWire: @unchecked Sendable {
    /// PipeWire's libjack folder on Debian 12 (`pw-jack` puts `/usr/${LIB}/pipewire-0.3/jack` first).
    static let jackLibraryFolder = "/usr/lib/x86_64-linux-gnu/pipewire-0.3/jack"
    static let nullSink = "sfnull"

    let runtimeDirectory: URL
    private let bus: ChildProcess
    private let busAddress: String
    private var pipewire: ChildProcess?
    private var wireplumber: ChildProcess?

    /// Whether PipeWire, WirePlumber, PipeWire's libjack and dbus-daemon are installed
    /// (scripts/setup.sh installs them for the test suite).
    static var isInstalled: Bool {
        ["/usr/bin/pipewire", "/usr/bin/wireplumber", "/usr/bin/pw-cli", "/usr/bin/pw-metadata", "/usr/bin/dbus-daemon",
         "\(jackLibraryFolder)/libjack.so.0"].allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }

    /// The environment of a JACK client on this PipeWire.
    var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory.path, "DBUS_SESSION_BUS_ADDRESS": busAddress,
         "LD_LIBRARY_PATH": Self.jackLibraryFolder, "PIPEWIRE_LOG_SYSTEMD": "false"]
    }

    init() throws {
        runtimeDirectory = try UniqueName.temporaryDirectory("pipewire-runtime")
        chmod(runtimeDirectory.path, 0o700)
        busAddress = "unix:path=\(runtimeDirectory.path)/bus"
        bus = try ChildProcess(label: "dbus-daemon", executable: "/usr/bin/dbus-daemon",
                               arguments: ["--session", "--nofork", "--nopidfile", "--address=\(busAddress)"])
        try waitFor("the session bus", timeout: .seconds(10)) {
            FileManager.default.fileExists(atPath: "\(runtimeDirectory.path)/bus")
        }
        try start()
    }

    deinit { close() }

    /// Starts PipeWire and WirePlumber and waits until the null sink's ports are visible to JACK
    /// clients (the sink is created again after every start: a device of the session).
    func start() throws {
        let env = environment.filter { $0.key != "LD_LIBRARY_PATH" }
        pipewire = try ChildProcess(label: "pipewire", executable: "/usr/bin/pipewire", arguments: [], environment: env)
        try waitFor("pipewire's socket", timeout: .seconds(10)) {
            FileManager.default.fileExists(atPath: "\(runtimeDirectory.path)/pipewire-0")
        }
        wireplumber = try ChildProcess(label: "wireplumber", executable: "/usr/bin/wireplumber", arguments: [], environment: env)
        _ = try tool("/usr/bin/pw-cli", "create-node", "adapter",
                     "{ factory.name=support.null-audio-sink node.name=\(Self.nullSink) media.class=Audio/Sink "
                        + "object.linger=1 audio.position=[FL FR] }")
        try waitFor("the null sink's JACK ports", timeout: .seconds(15)) {
            (try? jack("jack_lsp"))?.contains("\(Self.nullSink):playback_FR") == true
        }
    }

    /// Ends WirePlumber and PipeWire (SIGTERM) and waits until they are gone.
    func stop() {
        wireplumber?.stop()
        pipewire?.stop()
        wireplumber = nil
        pipewire = nil
    }

    func close() {
        stop()
        bus.stop()
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    /// Runs a jackd2 tool (`jack_lsp`, `jack_connect`, …) on PipeWire's libjack; its stdout.
    @discardableResult
    func jack(_ tool: String, _ arguments: String...) throws -> String {
        try self.tool("/usr/bin/\(tool)", arguments, environment: environment)
    }

    /// Sets PipeWire's forced quantum (frames per cycle; 0 lifts it).
    func forceQuantum(_ frames: Int) throws {
        _ = try tool("/usr/bin/pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(frames)")
    }

    private func tool(_ path: String, _ arguments: String...) throws -> String {
        try tool(path, arguments, environment: environment.filter { $0.key != "LD_LIBRARY_PATH" })
    }

    private func tool(_ path: String, _ arguments: [String], environment: [String: String]) throws -> String {
        let process = try ChildProcess(label: (path as NSString).lastPathComponent, executable: path, arguments: arguments,
                                       environment: environment)
        guard process.waitForExit(timeout: .seconds(15)) else {
            process.stop()
            throw IntegrationError("\(path) \(arguments) did not end within 15 s")
        }
        guard process.termination?.status == 0 else {
            throw IntegrationError("\(path) \(arguments) failed: \(process.standardOutput)\(process.standardError)")
        }
        return process.standardOutput
    }

    private func waitFor(_ what: String, timeout: Duration, _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw IntegrationError("\(what) did not appear within \(timeout)") }
            Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
        }
    }
}
