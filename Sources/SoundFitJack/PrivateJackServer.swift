import CJack
import CRealtimeSupport
import Foundation
import Glibc
import Synchronization

/// A `jackd` with the dummy backend that SoundFit starts for itself when no server is
/// reachable, so it runs on a machine with no sound card and no JACK session.
///
/// It gets a name no running server has, is stopped on a clean exit, and dies with SoundFit even after
/// `kill -9`: a keeper thread forks it with PR_SET_PDEATHSIG and then waits for it, so the
/// forking thread lives exactly as long as the server (the kernel signals the child when the
/// *thread* that forked it ends). Control thread only, except `isRunning`.
final class PrivateJackServer: @unchecked Sendable {
    let name: String
    let sampleRate: Int
    let period: Int
    private let logPath: String?
    private let pid = Atomic<Int32>(0)
    private let running = Atomic<Bool>(false)
    private var keeperDone: DispatchSemaphore?

    init(sampleRate: Int = 48000, period: Int = 256, logPath: String?) {
        name = Self.unusedName()
        self.sampleRate = sampleRate
        self.period = period
        self.logPath = logPath
    }

    /// `soundfit-private-<uid>-<k>` with the first k whose server is not running. Reusing names
    /// matters: jackd keeps a machine-wide registry of 8 servers, and a server killed together
    /// with its client can leave its slot behind; starting a server under the same name
    /// reclaims it, while fresh random names would fill the registry up.
    static func unusedName() -> String {
        for k in 1...32 {
            let candidate = "soundfit-private-\(getuid())-\(k)"
            if !serverIsRunning(candidate) { return candidate }
        }
        return "soundfit-private-\(getuid())-\(getpid())"
    }

    /// Whether a JACK server of that name answers a client (without starting one).
    static func serverIsRunning(_ name: String) -> Bool {
        var status = jack_status_t(rawValue: 0)
        guard let probe = soundfit_jack_client_open("soundfit-probe", JackNoStartServer, &status, name) else {
            return false
        }
        jack_client_close(probe)
        return true
    }

    var commandLine: [String] {
        ["jackd", "--no-realtime", "-n", name, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
    }

    /// The environment jackd is started with: SoundFit's own, without PipeWire's JACK library
    /// folders in `LD_LIBRARY_PATH` (`pw-jack` puts `/usr/${LIB}/pipewire-0.3/jack` first). A
    /// jackd loading PipeWire's libjackserver fails with "not implemented".
    static func environment(from inherited: [String: String]) -> [String] {
        var environment = inherited
        if let paths = environment["LD_LIBRARY_PATH"] {
            let kept = paths.split(separator: ":", omittingEmptySubsequences: true).filter { !$0.contains("pipewire") }
            environment["LD_LIBRARY_PATH"] = kept.isEmpty ? nil : kept.joined(separator: ":")
        }
        return environment.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// Launches `jackd` on a keeper thread. The caller then connects with retries while the
    /// server comes up.
    func start() throws(JackHostError) {
        let arguments = commandLine
        let environment = Self.environment(from: ProcessInfo.processInfo.environment)
        let logPath = logPath
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let spawnError = Atomic<Int32>(0)
        let thread = Thread { [self] in
            var cStrings = arguments.map { strdup($0) }
            cStrings.append(nil)
            var cEnvironment = environment.map { strdup($0) }
            cEnvironment.append(nil)
            let child = cStrings.withUnsafeMutableBufferPointer { argv in
                cEnvironment.withUnsafeMutableBufferPointer { envp in
                    soundfit_spawn_child(argv.baseAddress!, envp.baseAddress!, logPath)
                }
            }
            cStrings.forEach { free($0) }
            cEnvironment.forEach { free($0) }
            if child <= 0 {
                spawnError.store(errno == 0 ? EINVAL : errno, ordering: .relaxed)
                started.signal()
                done.signal()
                return
            }
            pid.store(child, ordering: .releasing)
            running.store(true, ordering: .releasing)
            started.signal()
            _ = soundfit_wait_child(child)
            running.store(false, ordering: .releasing)
            done.signal()
        }
        thread.name = "soundfit-private-jackd"
        keeperDone = done
        thread.start()
        started.wait()
        let error = spawnError.load(ordering: .relaxed)
        if error != 0 {
            throw .privateServerFailed("cannot run jackd: \(String(cString: strerror(error)))")
        }
    }

    /// True while the server process has not exited.
    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Stops the server: SIGTERM, then SIGKILL after two seconds.
    func stop() {
        guard let done = keeperDone else { return }
        keeperDone = nil
        let child = pid.load(ordering: .acquiring)
        if child > 0, isRunning {
            kill(child, SIGTERM)
            if done.wait(timeout: .now() + 2) == .timedOut {
                kill(child, SIGKILL)
                _ = done.wait(timeout: .now() + 2)
            }
        } else {
            _ = done.wait(timeout: .now() + 2)
        }
    }

    deinit { stop() }
}
