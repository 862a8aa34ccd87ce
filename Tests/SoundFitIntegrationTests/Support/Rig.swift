import Foundation
import Glibc
import SoundFitTestSupport
import Testing

/// A running SoundFit and what the test set up around it; `stop()` takes it all down.
protocol StartedRig: AnyObject {
    func stop()
}

/// The one entry point for starting SoundFit in a test: `Rig.run(.process(…)) { rig in … }`
/// stops the rig when the body returns or throws; `Rig.start(…)` leaves `stop()` to the caller
/// (a rig that outlives one scope). The kinds: `.process` (the binary on a test jackd, ready),
/// `.stateful` (a state directory that outlives restarts), `.inProcess` (on the test's own
/// JACK thread, for the allocation counter), `.listening` (a virtual listener on the outputs),
/// `.launched` (not waited for), `.privateServer` (no jackd: soundfit runs its own), `.nsm`
/// (started by an NSM server), `.server` (a jackd for a test that starts soundfit itself).
enum Rig {
    static func start<R: StartedRig>(_ rig: @autoclosure () throws -> R) rethrows -> R {
        try rig()
    }

    /// Not for a body that has a closure inside `#expect` or `#require`: Swift 6.3.1 then runs
    /// the macro's closure in place of a later closure of the body (they share a discriminator),
    /// so a `waitFor` predicate silently becomes another one. Such tests use `start` and `defer`.
    static func run<R: StartedRig, T>(_ start: @autoclosure () throws -> R, _ body: (R) throws -> T) throws -> T {
        let rig = try start()
        defer { rig.stop() }
        return try body(rig)
    }
}

extension SoundFitRig: StartedRig {}
extension StatefulRig: StartedRig {}
extension InProcessRealtimeRig: StartedRig {}

extension StartedRig where Self == SoundFitRig {
    /// `soundfit run` on a jackd of its own, its session active, on a state directory of its own.
    /// `startsServer: false` passes `--no-start-server` (a test that stops the server and must not
    /// see soundfit start another).
    static func process(channels: Int = 2, arguments: [String] = [], period: Int = 256, realtime: Bool = true,
                        startsServer: Bool = true) throws -> SoundFitRig {
        try SoundFitRig(channels: channels, extraArguments: arguments, period: period, realtime: realtime,
                        mayStartServer: startsServer)
    }
}

/// A test jackd and `soundfit run --no-start-server` on it, not waited for: for tests that read
/// how it starts (its log, its OSC endpoint, its exit) or reach it from other addresses than
/// 127.0.0.1.
final class LaunchedRig: StartedRig, @unchecked Sendable {
    let server: TestJackServer
    let soundfit: SoundFitProcess

    init(channels: Int?, arguments: [String]) throws {
        let server = try TestJackServer()
        do {
            soundfit = try SoundFitProcess(arguments: ["--server", server.name, "--no-start-server"]
                + (channels.map { ["--channels", "\($0)"] } ?? []) + arguments)
        } catch {
            server.stop()
            throw error
        }
        self.server = server
    }

    func stop() {
        soundfit.stop()
        server.stop()
    }
}

extension StartedRig where Self == LaunchedRig {
    /// `--channels` only when given (nil: soundfit's default).
    static func launched(channels: Int? = nil, arguments: [String] = []) throws -> LaunchedRig {
        try LaunchedRig(channels: channels, arguments: arguments)
    }
}

extension StartedRig where Self == StatefulRig {
    /// `soundfit run` on a state directory that outlives it, for restarts (`start: false`: none yet).
    static func stateful(channels: Int = 2, arguments: [String] = [], stateDirectory: URL? = nil,
                         start: Bool = true) throws -> StatefulRig {
        try StatefulRig(channels: channels, arguments: arguments, stateDirectory: stateDirectory, start: start)
    }
}

extension StartedRig where Self == InProcessRealtimeRig {
    /// SoundFit in this process on a 64-frame jackd, the allocation counter installed.
    static func inProcess(clientName: String, label: String, waitForSession: Bool = false,
                          playing signals: [[Float]] = []) throws -> InProcessRealtimeRig {
        try InProcessRealtimeRig(clientName: clientName, label: label, waitForSession: waitForSession, playing: signals)
    }
}

extension SoundFitIntegration.HearingTestThroughJack.ListeningRig: StartedRig {}

extension StartedRig where Self == SoundFitIntegration.HearingTestThroughJack.ListeningRig {
    /// A `.process` rig in fast timing, a virtual listener on its outputs answering over OSC.
    static func listening(_ simulated: SimulatedListener, seed: UInt64,
                          timing: [OSCValue] = SoundFitIntegration.HearingTestThroughJack.fastTiming) throws -> Self {
        try Self(simulated, seed: seed, timing: timing)
    }
}

/// A test jackd, a directory for the session (`root`), a protocol-exact NSM server and
/// `soundfit run` started as an NSM server would start it, its announce received (`announce`).
final class NSMRig: StartedRig, @unchecked Sendable {
    let server: TestJackServer
    let root: URL
    let nsm: TestNSMServer
    let process: ChildProcess
    let announce: OSCTestMessage

    init(directory: String) throws {
        let server = try TestJackServer()
        var root: URL?
        var process: ChildProcess?
        do {
            root = try UniqueName.temporaryDirectory(directory)
            nsm = try TestNSMServer()
            process = try Self.launch(nsm, server: server)
            announce = try nsm.waitFor("/nsm/server/announce") { $0.address == "/nsm/server/announce" }.match
        } catch {
            process?.stop()
            if let root { try? FileManager.default.removeItem(at: root) }
            server.stop()
            throw error
        }
        self.server = server
        self.root = root!
        self.process = process!
    }

    /// Starts `soundfit run` as an NSM server would (only `NSM_URL` tells it about the session).
    static func launch(_ nsm: TestNSMServer, server: TestJackServer, arguments: [String] = [],
                       environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(label: "soundfit", executable: try SoundFitBinary.path(),
                         arguments: ["run", "--osc-port", "0", "--http-port", "0", "--server", server.name,
                                     "--no-start-server"] + arguments,
                         environment: environment.merging([NSMTestProtocol.environmentVariable: nsm.url]) { $1 })
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: root)
        server.stop()
    }
}

extension StartedRig where Self == NSMRig {
    /// `directory`: the name the session directory starts with.
    static func nsm(directory: String = "nsm") throws -> NSMRig {
        try NSMRig(directory: directory)
    }
}

/// A test jackd and a scratch directory, for tests that start `soundfit` their own way (several
/// instances, a state directory they prepare, a command line they build).
final class ServerRig: StartedRig, @unchecked Sendable {
    let server: TestJackServer
    let directory: URL

    init(directory name: String) throws {
        let server = try TestJackServer()
        do {
            directory = try UniqueName.temporaryDirectory(name)
        } catch {
            server.stop()
            throw error
        }
        self.server = server
    }

    func stop() {
        try? FileManager.default.removeItem(at: directory)
        server.stop()
    }
}

extension StartedRig where Self == ServerRig {
    /// `directory`: the name the scratch directory starts with.
    static func server(directory: String = "sf-scratch") throws -> ServerRig {
        try ServerRig(directory: directory)
    }
}

extension Rig {
    /// `soundfit run ARGS` that must refuse to start: waits for its exit and expects a non-zero
    /// status (not a signal) and no ready line. Returns it exited, for its output; the caller
    /// stops it (which removes its state directory).
    static func refusedStart(_ arguments: [String], defaults: Bool = true, environment: [String: String]? = nil,
                             sourceLocation: SourceLocation = #_sourceLocation) throws -> SoundFitProcess {
        let soundfit = try SoundFitProcess(arguments: arguments, defaults: defaults, environment: environment)
        if !soundfit.process.waitForExit(timeout: .seconds(30)) {
            soundfit.stop()
            Issue.record("soundfit \(arguments) did not exit; stdout: \(soundfit.process.standardOutput)",
                         sourceLocation: sourceLocation)
        }
        let termination = try #require(soundfit.process.termination, sourceLocation: sourceLocation)
        #expect(!termination.bySignal && termination.status != 0, "exit \(termination)", sourceLocation: sourceLocation)
        #expect(!soundfit.process.standardOutput.contains("soundfit ready"), sourceLocation: sourceLocation)
        return soundfit
    }
}

/// `soundfit run` with no server reachable (`JACK_DEFAULT_SERVER` names `absentServer`), so it
/// runs a private jackd, and its ready line. `stop()` also ends a private jackd soundfit failed
/// to stop (it is still ours to end).
final class PrivateServerRig: StartedRig, @unchecked Sendable {
    let absentServer = UniqueName.make("sf-absent")
    let soundfit: SoundFitProcess
    let ready: ReadyLine

    init() throws {
        soundfit = try SoundFitProcess(arguments: [], environment: ["JACK_DEFAULT_SERVER": absentServer])
        do {
            ready = try soundfit.waitForReady()
        } catch {
            soundfit.stop()
            throw error
        }
    }

    func stop() {
        soundfit.stop()
        for pid in ProcessTable.pids(commandLineContaining: "-n \(ready.server) ") { kill(pid, SIGKILL) }
    }
}

extension StartedRig where Self == PrivateServerRig {
    static func privateServer() throws -> PrivateServerRig {
        try PrivateServerRig()
    }
}
