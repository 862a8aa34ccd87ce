import ArgumentParser
import Foundation
import Glibc
import SoundFit
import Synchronization

/// `soundfit test`: the hearing test from a terminal, against a running instance or (`--start`)
/// one of its own. It starts the test over OSC, prints what the test reports, sends
/// `/test/heard` for Enter or Space and `/test/cancel` for Ctrl-C (the terminal is in raw mode
/// while it runs). soundfit reports nothing while a presentation is under way (only after each
/// response window closes, never a level), so what this prints gives no cue to the listener.
/// With `--export FILE` the finished test's audiogram is written there as a FHIR R4 Observation
/// (`/test/export`).
///
/// Threads: the OSC socket's receive thread prints and ends the run; a thread of its own reads
/// keys; the main thread waits for the end.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Takes the hearing test on a running soundfit: press Enter or Space when you hear a tone; Ctrl-C cancels.",
        discussion: """
            Start soundfit first (soundfit run), put the headphones on its outputs, then run soundfit test;
            or let soundfit test start one of its own with --start (arguments after -- go to soundfit run,
            e.g. soundfit test --start -- --connect), which it stops afterwards.
            With --export FILE the finished test's audiogram is written to FILE as an HL7 FHIR R4 Observation
            (JSON). A result that is unreliable or incomplete is kept but not applied: soundfit says why, and
            /test/submit (or the page's button) applies it.
            Exit status: 0 when the test is done, 1 when it failed, was refused, the export could not be
            written or soundfit did not answer, 130 when cancelled.
            """)

    /// How long soundfit has to answer `/test/start` before the run gives up.
    static let answerTimeout: TimeInterval = 3

    @Option(help: "The UDP port soundfit listens on.")
    var oscPort: UInt16 = 7700

    @Option(help: "The address soundfit listens on.")
    var host = "127.0.0.1"

    @Option(help: "left, right or both.")
    var ear = "both"

    @Option(parsing: .upToNextOption, help: "The frequencies in Hz (default: 250 500 1000 2000 3000 4000 6000 8000).")
    var hz: [Double] = []

    @Option(help: "The listener's id, kept in the test's record and export.")
    var listener: String?

    @Option(help: "The seed of the test's randomness (catch trials, gaps); default a random one, kept in the record.")
    var seed: UInt64?

    @Option(help: "Write the finished test's audiogram to this file as an HL7 FHIR R4 Observation (JSON).")
    var export: String?

    @Flag(help: "Start a soundfit of its own for the test (soundfit run, with the arguments after --), and stop it afterwards.")
    var start = false

    @Argument(parsing: .postTerminator, help: "With --start: arguments for soundfit run.")
    var runArguments: [String] = []

    func run() throws {
        guard start || runArguments.isEmpty else { throw ValidationError("arguments after -- need --start") }
        var own: OwnSoundFit?
        let server: OSCPeer
        if start {
            let started = try OwnSoundFit(runArguments: runArguments)
            own = started
            server = started.endpoint
        } else {
            guard let peer = OSCPeer(host: host, port: oscPort) else { throw ValidationError("--host: not an IPv4 address: \(host)") }
            server = peer
        }
        defer { own?.stop() }
        let socket: OSCSocket
        do {
            socket = try OSCSocket(host: "127.0.0.1", port: 0)
        } catch {
            throw ValidationError("\(error)")
        }
        let ending = HearingTestEnding()
        let answered = Atomic<Bool>(false)
        // Whether the test runs: `/test/start` is answered once the test has started (a task on
        // soundfit's side), and a key pressed before that is no answer to any tone, so it is
        // not sent (sent, it could reach soundfit first and end the run with "no hearing test
        // is running").
        let running = Atomic<Bool>(false)
        let exportFile = export.map { URL(fileURLWithPath: $0) }
        // Set before the socket receives: the receive thread sends `/test/export` with it.
        let sender = Mutex<(@Sendable (OSCMessage) -> Void)?>(nil)
        socket.startReceiving(maximumPacketBytes: 65536, onPacket: { bytes, _ in
            answered.store(true, ordering: .relaxed)
            guard let packet = try? OSCCodec.decode(bytes) else { return }
            for message in packet.messages {
                if message.address == "/test/state" { running.store(true, ordering: .relaxed) }
                if message.address == "/test/export", let exportFile {
                    ending.finish(Self.write(message, to: exportFile))
                    continue
                }
                Self.say(Self.describe(message))
                guard let code = Self.exitCode(after: message) else { continue }
                // Done: the export is asked for, and the run ends with its answer.
                if code == 0, exportFile != nil, let send = sender.withLock({ $0 }) {
                    send(OSCMessage("/test/export"))
                } else {
                    ending.finish(code)
                }
            }
        }, onOversized: { _, _ in })
        let send: @Sendable (OSCMessage) -> Void = { _ = socket.send(OSCCodec.encode($0), to: server) }
        sender.withLock { $0 = send }

        send(OSCMessage("/test/start", [.string(ear)] + hz.map { .float(Float($0)) }
            + (listener.map { [.string("listener"), .string($0)] } ?? [])
            + (seed.map { [.string("seed"), .string(String($0))] } ?? [])))
        // Nothing listens at a closed port, and UDP does not say so: give up after a while.
        Thread { [server] in
            Thread.sleep(forTimeInterval: Self.answerTimeout)
            guard !answered.load(ordering: .relaxed) else { return }
            Self.say("no answer from soundfit at \(server) within \(Int(Self.answerTimeout)) s: is it running "
                + "(soundfit run), on that port? soundfit test --start runs one of its own.")
            ending.finish(1)
        }.start()
        let terminal = RawTerminal()
        Self.say("Hearing test: press Enter or Space whenever you hear a tone, Ctrl-C to cancel.")
        // Keys: read on a thread of its own, so the end of the test is not held up by a read.
        Thread {
            var byte: UInt8 = 0
            while ending.code == nil, read(STDIN_FILENO, &byte, 1) == 1 {
                switch byte {
                case 10, 13, 32:
                    if running.load(ordering: .relaxed) { send(OSCMessage("/test/heard")) }
                case 3:
                    send(OSCMessage("/test/cancel"))
                    // If soundfit does not answer, leave anyway.
                    Thread.sleep(forTimeInterval: 2)
                    ending.finish(130)
                default: break
                }
            }
        }.start()
        let code = ending.wait()
        terminal.restore()
        socket.close()
        if code != 0 { throw ExitCode(code) }
    }

    /// Writes the export `/test/export ,s json` to `file` atomically; the exit status.
    static func write(_ message: OSCMessage, to file: URL) -> Int32 {
        guard case .string(let json)? = message.arguments.first else {
            say("soundfit sent no export: \(describe(message))")
            return 1
        }
        do {
            try AtomicFile.write(Data(json.utf8), to: file)
        } catch {
            say("the export was not written to \(file.path): \(error)")
            return 1
        }
        say("FHIR export written to \(file.path)")
        return 0
    }

    /// Writes a line at once (`\r\n`: the terminal is raw).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\r\n").utf8))
    }

    /// The exit status a report ends the run with, if it does.
    static func exitCode(after message: OSCMessage) -> Int32? {
        if message.address == "/error" { return 1 }
        guard message.address == "/test/state", case .string(let state)? = message.arguments.first else { return nil }
        switch state {
        case "done": return 0
        case "cancelled": return 130
        case "failed": return 1
        default: return nil
        }
    }

    /// A report in words: `test/state running ear left hz 1000 progress 0.1`.
    static func describe(_ message: OSCMessage) -> String {
        let words = message.arguments.map { argument -> String in
            switch argument {
            case .string(let text): text
            case .float(let value): value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
            case .int32(let value): String(value)
            default: "\(argument)"
            }
        }
        return ([String(message.address.dropFirst())] + words).joined(separator: " ")
    }
}

/// A `soundfit run` of the test's own (`soundfit test --start`): the same executable, started
/// with an OSC port of its own choosing (`--osc-port 0`, read from its ready line) and a free
/// HTTP port (`--http-port 0`, as the OSC port 0 implies; the arguments after `--`
/// may choose another), stopped with SIGTERM at the end. Its log goes to a file, shown when it
/// does not start.
final class OwnSoundFit {
    let endpoint: OSCPeer
    private let process: Process

    init(runArguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("soundfit-test-\(getpid()).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw ValidationError("cannot create the log of its soundfit: \(log.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["run", "--osc-port", "0", "--http-port", "0"] + runArguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        TestCommand.say("Starting soundfit (its log: \(log.path)) …")
        // The ready line names the OSC endpoint: `soundfit ready osc=udp://127.0.0.1:PORT …`.
        var buffered = Data()
        var found: OSCPeer?
        while found == nil {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }  // the child ended before it was ready
            buffered += chunk
            let text = String(decoding: buffered, as: UTF8.self)
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("soundfit ready ") }),
                  let field = line.split(separator: " ").first(where: { $0.hasPrefix("osc=udp://") }),
                  let colon = field.lastIndex(of: ":"), let port = UInt16(field[field.index(after: colon)...]) else { continue }
            found = OSCPeer(host: String(field.dropFirst("osc=udp://".count).prefix { $0 != ":" }), port: port)
        }
        guard let found else {
            process.waitUntilExit()
            let problem = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ValidationError("soundfit run did not start (exit \(process.terminationStatus)):\n\(problem)")
        }
        endpoint = found
        // Keep reading its standard output so it never blocks on a full pipe.
        Thread { while !output.fileHandleForReading.availableData.isEmpty {} }.start()
    }

    /// Ends the child (SIGTERM, then SIGKILL after 5 s) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// How the test ended: the first exit status wins.
final class HearingTestEnding: Sendable {
    private let state = Mutex<Int32?>(nil)
    private let done = DispatchSemaphore(value: 0)

    var code: Int32? { state.withLock { $0 } }

    func finish(_ code: Int32) {
        let first = state.withLock { current -> Bool in
            guard current == nil else { return false }
            current = code
            return true
        }
        if first { done.signal() }
    }

    func wait() -> Int32 {
        done.wait()
        return code ?? 1
    }
}

/// The terminal in raw mode (keys one at a time, no echo, Ctrl-C as a key) until `restore()`;
/// nothing when standard input is no terminal.
final class RawTerminal {
    private var saved = termios()
    private let isTerminal: Bool

    init() {
        isTerminal = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &saved) == 0
        guard isTerminal else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    func restore() {
        guard isTerminal else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}
