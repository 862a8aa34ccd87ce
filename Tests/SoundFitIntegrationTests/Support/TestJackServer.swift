import CJack
import Foundation
import Glibc

/// A real `jackd -R -n NAME -d dummy -r 48000 -p PERIOD` with a unique name, stopped (and its
/// leftovers in /dev/shm removed) when the test is done. Realtime, as a studio runs it: the
/// test processes run side by side on this 2-core machine, and a non-realtime server's cycles
/// then came late (xruns, skipped cycles) whenever the others were busy, so that recordings
/// measured the scheduler's choices, not SoundFit (two fresh-clone runs failed on a click and
/// on a level measured from glitched recordings). `realtime: false` starts it with
/// `--no-realtime`. (`jackd -R` falls back to normal scheduling where SCHED_FIFO is not allowed;
/// check with `ProcessScheduling.hasRealtimeThread`.)
final class TestJackServer: @unchecked Sendable {
    static let sampleRate = 48000

    let name: String
    let period: Int
    let realtime: Bool
    /// A command that runs jackd elsewhere (`nsenter … --` into a network namespace), or empty.
    let wrapper: [String]
    private(set) var process: ChildProcess?

    /// Starts the server and waits until a client can connect to it.
    init(name: String = UniqueName.make("sf-int"), period: Int = 256, realtime: Bool = true,
         reclaimingLeaks: Bool = true, wrapper: [String] = []) throws {
        if reclaimingLeaks { _ = JackRegistry.reclaimLeakedTestServers }
        self.name = name
        self.period = period
        self.realtime = realtime
        self.wrapper = wrapper
        try start()
    }

    var arguments: [String] {
        [realtime ? "-R" : "--no-realtime", "-n", name, "-d", "dummy", "-r", "\(Self.sampleRate)", "-p", "\(period)"]
    }

    /// Starts (or restarts) jackd and waits until it accepts clients.
    func start(timeout: Duration = .seconds(15)) throws {
        precondition(process?.isRunning != true, "server \(name) already running")
        let command = wrapper + ["/usr/bin/jackd"] + arguments
        let child = try ChildProcess(label: "jackd \(name)", executable: command[0], arguments: Array(command.dropFirst()))
        process = child
        let deadline = ContinuousClock.now + timeout
        while !Self.acceptsClients(name) {
            if !child.isRunning {
                throw IntegrationError("jackd \(name) exited during startup: \(child.standardError)\(child.standardOutput)")
            }
            if ContinuousClock.now >= deadline {
                throw IntegrationError("jackd \(name) did not accept clients within \(timeout)")
            }
            Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
        }
    }

    /// True when a client can open on server `name` (the probe client is closed again).
    static func acceptsClients(_ name: String) -> Bool {
        JackMessages.silence()
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
        guard let client = soundfit_jack_client_open(UniqueName.make("probe"), options, &status, name) else {
            return false
        }
        jack_client_close(client)
        return true
    }

    /// Kills the server with `signal` and waits until it is gone (reaped), so the same name
    /// can be started again.
    func kill(signal: Int32) {
        guard let process else { return }
        process.send(signal)
        process.waitForExit(timeout: .seconds(10))
    }

    /// SIGTERM (SIGKILL after a grace period). If the server last died from a signal (a test
    /// killed it, or it had to be SIGKILLed), clean up after it: a jackd that did not exit
    /// cleanly keeps its slot in JACK's shared server registry (8 slots for the whole machine)
    /// and its files in /dev/shm. Starting a server under the same name reclaims the slot, and
    /// stopping that one cleanly releases it.
    func stop() {
        guard let process else { return }
        process.stop()
        self.process = nil
        if process.termination?.bySignal == true, let reclaim = try? ChildProcess(
            label: "jackd \(name) (reclaim)", executable: "/usr/bin/jackd", arguments: arguments) {
            let deadline = ContinuousClock.now + .seconds(10)
            while reclaim.isRunning && !Self.acceptsClients(name) && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
            }
            reclaim.stop()
            if reclaim.termination?.bySignal == true { removeLeftovers() }
        }
    }

    /// Starts and cleanly stops a server named `name`, retrying while a previous server of that
    /// name is still exiting (a zombie counts as alive for JACK). Frees a leaked registry slot.
    static func reclaim(_ name: String, timeout: Duration = .seconds(15)) throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                let server = try TestJackServer(name: name, reclaimingLeaks: false)
                server.stop()
                return
            } catch {
                if ContinuousClock.now >= deadline { throw error }
                Thread.sleep(forTimeInterval: 0.2)  // backoff before a retry
            }
        }
    }

    /// Sockets and semaphores a SIGKILLed jackd leaves in /dev/shm (only this server's).
    private func removeLeftovers() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm") else { return }
        for entry in entries where entry.hasPrefix("jack_\(name)_") || entry.hasPrefix("jack_sem.") && entry.contains("_\(name)_") {
            try? FileManager.default.removeItem(atPath: "/dev/shm/\(entry)")
        }
    }

    deinit { stop() }
}

/// libjack prints every failed connection attempt to stderr; the probes expect failures.
enum JackMessages {
    static func silence() {
        jack_set_error_function(testJackIgnoreMessage)
        jack_set_info_function(testJackIgnoreMessage)
    }
}

func testJackIgnoreMessage(_ message: UnsafePointer<CChar>?) {}

/// JACK's shared server registry (`/dev/shm/jack-shm-registry`): 8 slots per machine, one per
/// running server, each holding `jack-<uid>:<server name>:`.
enum JackRegistry {
    /// Names of registered servers whose name starts with `prefix` and whose process is gone
    /// (slots leaked by a jackd that did not exit cleanly). Each entry is a 4-byte pid followed
    /// by `jack-<uid>:<name>:`.
    static func deadServers(prefix: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/dev/shm/jack-shm-registry") else { return [] }
        let bytes = [UInt8](data)
        let marker = Array(":\(prefix)".utf8)
        var names: [String] = []
        var index = 4
        while index + marker.count <= bytes.count {
            defer { index += 1 }
            guard bytes[index] == marker[0], Array(bytes[index..<index + marker.count]) == marker,
                  let end = bytes[index...].firstIndex(of: 0) else { continue }
            // Back up to the start of "jack-<uid>:" to find the pid in front of it.
            var start = index - 1
            while start > 0 && bytes[start - 1] != 0 { start -= 1 }
            guard start >= 4, String(decoding: bytes[start..<index], as: UTF8.self).hasPrefix("jack-") else { continue }
            let pid = bytes[(start - 4)..<start].reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
            let text = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
            guard text.hasSuffix(":"), pid > 0, kill(pid, 0) != 0 && errno == ESRCH else { continue }
            names.append(String(text.dropLast()))
        }
        return names
    }

    /// Frees the slots leaked by earlier runs of these tests (servers named `sf-int-…`),
    /// so a crashed run cannot exhaust the registry. Once per test process. Only the servers of
    /// test processes that have ended: a server another running test process killed is dead
    /// only until that test starts it again, and reclaiming it then made its restart fail with
    /// "server already active" (seen with two test runs side by side).
    static let reclaimLeakedTestServers: Void = {
        for name in deadServers(prefix: "sf-int-") where !testProcessRuns(ofServer: name) {
            try? TestJackServer.reclaim(name, timeout: .seconds(5))
        }
    }()

    /// Whether the test process that named server `name` (`sf-int-<pid>-…`, `UniqueName`) still
    /// runs. Unknown forms count as ended.
    static func testProcessRuns(ofServer name: String) -> Bool {
        let parts = name.split(separator: "-")
        guard parts.count >= 3, let pid = pid_t(parts[2]), pid > 0 else { return false }
        return pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH
    }

    static func contains(_ server: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/dev/shm/jack-shm-registry") else { return false }
        let needle = Array(":\(server):".utf8) + [0]
        let bytes = [UInt8](data)
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if Array(bytes[start..<start + needle.count]) == needle { return true }
        }
        return false
    }
}
