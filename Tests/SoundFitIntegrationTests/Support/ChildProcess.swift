import Foundation
import Glibc
import Synchronization

/// A failure of the test harness itself (a process that would not start, a reply that never came).
struct IntegrationError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process (jackd or soundfit) with its stdout and stderr collected in memory.
///
/// Children are started from one long-lived thread through `setpriv --pdeathsig TERM`, so the
/// kernel stops them if the test process dies (a crash cannot leak a jackd). SIGTERM, not
/// SIGKILL: a SIGKILLed jackd never unregisters from JACK's shared server registry, which has
/// only 8 slots ("Too many servers already active" for every later jackd on the machine).
/// On a normal exit `stop()` (also called by `deinit`) sends SIGTERM, then SIGKILL after a
/// grace period.
final class ChildProcess: @unchecked Sendable {
    let label: String
    private let process = Process()
    private let stdoutText = Mutex<[UInt8]>([])
    private let stderrText = Mutex<[UInt8]>([])
    private let readersDone = DispatchGroup()
    /// The child's stdin, when it was started with `input: true` (otherwise /dev/null).
    private let inputPipe: Pipe?

    /// `standardInput`: a descriptor the child reads as its stdin instead (e.g. one end of a
    /// socket pair); the caller keeps and closes its own handle.
    init(label: String, executable: String, arguments: [String], environment: [String: String]? = nil,
         input: Bool = false, standardInput: FileHandle? = nil) throws {
        self.label = label
        let setpriv = "/usr/bin/setpriv"
        if FileManager.default.isExecutableFile(atPath: setpriv) {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--pdeathsig", "TERM", "--", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment ?? [:] { env[key] = value }
        process.environment = env
        inputPipe = input ? Pipe() : nil
        process.standardInput = inputPipe ?? standardInput ?? FileHandle.nullDevice
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        try SpawnerThread.shared.perform { try self.process.run() }
        startReader(outPipe.fileHandleForReading) { [self] bytes in stdoutText.withLock { $0 += bytes } }
        startReader(errPipe.fileHandleForReading) { [self] bytes in stderrText.withLock { $0 += bytes } }
    }

    private func startReader(_ handle: FileHandle, append: @escaping @Sendable ([UInt8]) -> Void) {
        readersDone.enter()
        let thread = Thread { [readersDone] in
            defer { readersDone.leave() }
            let fd = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    append(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? handle.close()
        }
        thread.name = "child-reader"
        thread.start()
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var standardOutput: String { String(decoding: stdoutText.withLock { $0 }, as: UTF8.self) }
    var standardError: String { String(decoding: stderrText.withLock { $0 }, as: UTF8.self) }

    /// The exit status (or terminating signal number) once the process has exited.
    var termination: (status: Int32, bySignal: Bool)? {
        process.isRunning ? nil : (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    /// Writes `line` and a newline to the child's stdin (started with `input: true`).
    func writeLine(_ line: String) throws {
        guard let inputPipe else { throw IntegrationError("\(label) was started without stdin") }
        try inputPipe.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Sends `signal` to the process (if it still runs).
    func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits until the process has exited and was reaped; false on timeout.
    @discardableResult
    func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)  // polls a condition (with a deadline)
        }
        // Let the pipe readers see EOF so the collected output is complete.
        _ = readersDone.wait(timeout: .now() + 2)
        return true
    }

    /// Polls the collected stdout (`fromStandardError`: stderr, where soundfit logs) until
    /// `predicate` finds what it needs, the process exits or the deadline passes. While the
    /// process runs, `predicate` sees whole lines only: a read can end inside a line (a reply
    /// longer than the 4 KB read, or one that lands behind other output), and half of the
    /// browser driver's JSON reply, parsed as the whole line, failed a test. After the exit it
    /// sees everything.
    func waitForOutput<T>(timeout: Duration, fromStandardError: Bool = false, _ predicate: (String) -> T?) -> T? {
        let deadline = ContinuousClock.now + timeout
        var collected: String { fromStandardError ? standardError : standardOutput }
        var wholeLines: String {
            let bytes = fromStandardError ? stderrText.withLock { $0 } : stdoutText.withLock { $0 }
            guard let end = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return "" }
            return String(decoding: bytes[...end], as: UTF8.self)
        }
        while true {
            if let found = predicate(wholeLines) { return found }
            if !process.isRunning {
                _ = readersDone.wait(timeout: .now() + 2)
                return predicate(collected)
            }
            if ContinuousClock.now >= deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)  // polls a condition (with a deadline)
        }
    }

    /// SIGTERM, then SIGKILL after `grace`. Idempotent.
    func stop(grace: Duration = .seconds(5)) {
        guard process.isRunning else { return }
        send(SIGTERM)
        if !waitForExit(timeout: grace) {
            send(SIGKILL)
            waitForExit(timeout: .seconds(5))
        }
    }

    deinit { stop() }
}

/// One thread that lives as long as the test process and starts every child: a parent-death
/// signal fires when the *thread* that forked exits, so children must not be forked from
/// pool threads that come and go.
final class SpawnerThread: @unchecked Sendable {
    static let shared = SpawnerThread()

    private let condition = NSCondition()
    private var work: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in loop() }
        thread.name = "child-spawner"
        thread.start()
    }

    private func loop() {
        while true {
            condition.lock()
            while work.isEmpty { condition.wait() }
            let next = work.removeFirst()
            condition.unlock()
            next()
        }
    }

    /// Runs `body` on the spawner thread, waits for it, and rethrows its error.
    func perform(_ body: @escaping () throws -> Void) throws {
        final class Outcome: @unchecked Sendable { var error: (any Error)? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        work.append {
            do { try body() } catch { outcome.error = error }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        if let error = outcome.error { throw error }
    }
}

/// Process helpers that only look (never kill anything they did not start).
enum ProcessTable {
    /// Pids of live processes whose command line contains `fragment`.
    static func pids(commandLineContaining fragment: String) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var result: [pid_t] = []
        for entry in entries {
            guard let pid = pid_t(entry), pid != getpid() else { continue }
            guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !data.isEmpty
            else { continue }
            let commandLine = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if commandLine.contains(fragment) { result.append(pid) }
        }
        return result
    }

    /// Polls until no live process's command line contains `fragment`; false on timeout.
    static func waitUntilGone(_ fragment: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !pids(commandLineContaining: fragment).isEmpty {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)  // polls a condition (with a deadline)
        }
        return true
    }
}

/// Unique names for servers, clients and directories of one test run.
enum UniqueName {
    private static let counter = Atomic<Int>(0)

    static func make(_ prefix: String) -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        return "\(prefix)-\(getpid())-\(n)-\(UInt16.random(in: .min ... .max))"
    }

    /// A fresh temporary directory; removed by the caller.
    static func temporaryDirectory(_ prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(make(prefix), isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
