import Foundation
import Glibc
import Testing

/// A jackd, a state directory that outlives each `soundfit`, the current `soundfit` on it and
/// a test JACK client that follows it across restarts. `stop()` (or deinit) removes everything.
final class StatefulRig: @unchecked Sendable {
    let server: TestJackServer
    let stateDirectory: URL
    let channels: Int
    let arguments: [String]
    private(set) var instance: SoundFitInstance?
    private(set) var audioClient: TestJackClient?

    init(channels: Int = 2, arguments: [String] = [], stateDirectory: URL? = nil, start: Bool = true) throws {
        server = try TestJackServer()
        self.channels = channels
        self.arguments = arguments
        do {
            self.stateDirectory = try stateDirectory ?? UniqueName.temporaryDirectory("soundfit-state")
            if start { try self.start() }
        } catch {
            server.stop()
            throw error
        }
    }

    var soundfit: SoundFitInstance {
        get throws {
            guard let instance else { throw IntegrationError("soundfit is not running") }
            return instance
        }
    }

    var osc: OSCTestClient { get throws { try soundfit.osc } }

    /// Starts a `soundfit` on the state directory (the previous one must be stopped).
    @discardableResult
    func start(arguments extra: [String] = [], waitForSession: Bool = true) throws -> SoundFitInstance {
        precondition(instance?.process.isRunning != true, "soundfit already running")
        let started = try SoundFitInstance(server: server, stateDirectory: stateDirectory, channels: channels,
                                           arguments: arguments + extra, waitForSession: waitForSession)
        instance = started
        return started
    }

    /// SIGTERM and wait (the state is flushed on a clean shutdown).
    func stopSoundFit() {
        instance?.stop()
    }

    /// `kill -9` the running soundfit.
    func killSoundFit() {
        instance?.kill9()
    }

    /// Stops the running soundfit (SIGTERM) and starts a new one on the same state directory.
    @discardableResult
    func restart(arguments extra: [String] = []) throws -> SoundFitInstance {
        stopSoundFit()
        return try start(arguments: extra)
    }

    /// The test client, connected to the running soundfit's ports (reconnected after a restart).
    func audio() throws -> TestJackClient {
        let client: TestJackClient
        if let audioClient {
            client = audioClient
        } else {
            client = try TestJackClient(server: server.name, channels: channels)
            audioClient = client
        }
        try client.connect(toClient: try soundfit.ready.client)
        return client
    }

    func stop() {
        audioClient?.close()
        audioClient = nil
        instance?.stop()
        instance = nil
        server.stop()
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    deinit { stop() }
}

/// Runs a `soundfit` subcommand that exits by itself (`presets`, `state export`, …).
enum SoundFitCommandLine {
    struct Result {
        var status: Int32
        var bySignal: Bool
        var standardOutput: String
        var standardError: String
        var succeeded: Bool { !bySignal && status == 0 }
    }

    static func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> Result {
        let process = try ChildProcess(label: "soundfit \(arguments.first ?? "")", executable: try SoundFitBinary.path(),
                                       arguments: arguments)
        guard process.waitForExit(timeout: timeout) else {
            process.stop()
            throw IntegrationError("soundfit \(arguments) did not exit within \(timeout)")
        }
        let termination = process.termination ?? (status: -1, bySignal: true)
        return Result(status: termination.status, bySignal: termination.bySignal,
                      standardOutput: process.standardOutput, standardError: process.standardError)
    }
}

/// The `parameters` object of `<directory>/state.json` (nil when missing or unreadable).
func savedParameters(_ directory: URL) -> [String: Any]? {
    (try? JSONFile.object(at: directory.appendingPathComponent("state.json")))?["parameters"] as? [String: Any]
}

func savedNumber(_ directory: URL, _ address: String) -> Double? {
    (savedParameters(directory)?[address] as? NSNumber)?.doubleValue
}

/// Waits until `state.json` holds `value` at `address`; returns how long it took.
@discardableResult
func waitUntilSaved(_ directory: URL, _ address: String, _ value: Double,
                            sourceLocation: SourceLocation = #_sourceLocation) -> Duration? {
    let took = waitForCondition(timeout: .seconds(5)) {
        savedNumber(directory, address).map { abs($0 - value) < 1e-4 } ?? false
    }
    #expect(took != nil, "state.json never held \(address) = \(value): \(String(describing: savedParameters(directory)))",
            sourceLocation: sourceLocation)
    return took
}

/// JSON helpers for the files soundfit writes (read with Foundation's parser, independent of
/// SoundFit's own).
enum JSONFile {
    static func object(at url: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: url)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw IntegrationError("\(url.path) is not a JSON object")
        }
        return object
    }

    static func write(_ object: Any, to url: URL) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: url)
    }
}

extension OSCTestClient {
    /// A second client on SoundFit's OSC `port`, subscribed, its initial values drained: what a
    /// test that watches notifications (`/invalidated`, `/patch/current`, value feedback) starts
    /// with, so that it sees only what came after.
    static func subscribed(to port: UInt16) throws -> OSCTestClient {
        let subscriber = try OSCTestClient(port: port)
        try subscriber.subscribeDrainingValues()
        return subscriber
    }

    /// `/subscribe` → `/subscribed`, then drains the initial values (every parameter's): they are
    /// sent with the answer to `/subscribe`, so all of them arrive before `/synced`.
    private func subscribeDrainingValues() throws {
        send("/subscribe")
        _ = try waitFor("/subscribed") { $0.address == "/subscribed" }
        try sync()
    }

    /// Waits for value feedback `<address> <value>` (one argument) satisfying `predicate`.
    @discardableResult
    func waitForFeedback(_ address: String, timeout: Duration = .seconds(10),
                         _ predicate: (OSCValue) -> Bool = { _ in true }) throws -> OSCValue {
        try waitFor("feedback \(address)", timeout: timeout) {
            $0.address == address && $0.arguments.count == 1 && predicate($0.arguments[0])
        }.match.arguments[0]
    }

    /// Polls a query until `predicate` holds for the value; returns the last value.
    @discardableResult
    func pollQuery(_ address: String, timeout: Duration = .seconds(10), until predicate: (OSCValue) -> Bool) throws -> OSCValue {
        let deadline = ContinuousClock.now + timeout
        while true {
            let value = try query(address)
            if predicate(value) || ContinuousClock.now >= deadline { return value }
            Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
        }
    }

    /// Sends `address args` and waits for the reply at `replyAddress` or an `/error` for `address`.
    func request(_ address: String, _ arguments: [OSCValue], reply replyAddress: String,
                 timeout: Duration = .seconds(10)) throws -> OSCTestMessage {
        sendRaw(OSCWire.encode(OSCTestMessage(address, arguments)))
        return try waitFor("\(replyAddress) or /error for \(address) \(arguments)", timeout: timeout) {
            $0.address == replyAddress || ($0.address == "/error" && $0.string(0) == address)
        }.match
    }
}
