import CRealtimeSupport
import Foundation
import Glibc

/// A `jackd` with the dummy backend that SoundFit starts for itself when no server is
/// reachable, so it runs on a machine with no sound card and no JACK session.
///
/// It gets a unique name, dies with SoundFit (also after `kill -9`, through PR_SET_PDEATHSIG)
/// and is stopped on a clean exit. Control thread only.
final class PrivateJackServer {
    let name: String
    let sampleRate: Int
    let period: Int
    private let logPath: String?
    private var pid: pid_t = -1

    init(sampleRate: Int = 48000, period: Int = 256, logPath: String?) {
        name = "soundfit-private-\(getpid())-\(UInt16.random(in: .min ... .max))"
        self.sampleRate = sampleRate
        self.period = period
        self.logPath = logPath
    }

    var commandLine: [String] {
        ["jackd", "--no-realtime", "-n", name, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
    }

    /// Launches `jackd`. The caller then connects with retries while the server comes up.
    func start() throws(JackHostError) {
        let arguments = commandLine
        var cStrings = arguments.map { strdup($0) }
        cStrings.append(nil)
        defer { cStrings.forEach { free($0) } }
        let child = cStrings.withUnsafeMutableBufferPointer { soundfit_spawn_child($0.baseAddress!, logPath) }
        guard child > 0 else {
            throw .privateServerFailed("cannot run jackd: \(String(cString: strerror(errno)))")
        }
        pid = child
    }

    /// True while the server process has not exited.
    var isRunning: Bool {
        guard pid > 0 else { return false }
        return soundfit_wait_child(pid, 0) == 0
    }

    /// Stops the server: SIGTERM, then SIGKILL after two seconds.
    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        if soundfit_wait_child(pid, 2000) == 0 {
            kill(pid, SIGKILL)
            _ = soundfit_wait_child(pid, 2000)
        }
        pid = -1
    }

    deinit { stop() }
}
