import ArgumentParser
import Foundation
import Glibc
import SoundFit
import Synchronization

/// `soundfit test`: the hearing test from a terminal, against a running instance. It starts the
/// test over OSC, prints what the test reports, sends `/test/heard` for Enter or Space and
/// `/test/cancel` for Ctrl-C (the terminal is in raw mode while it runs).
///
/// Threads: the OSC socket's receive thread prints and ends the run; the main task reads keys.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Takes the hearing test on a running soundfit: press Enter or Space when you hear a tone; Ctrl-C cancels.",
        discussion: """
            Start soundfit first (soundfit run), put the headphones on its outputs, then run soundfit test.
            Exit status: 0 when the test is done, 1 when it failed or was refused, 130 when cancelled.
            """)

    @Option(help: "The UDP port soundfit listens on.")
    var oscPort: UInt16 = 7700

    @Option(help: "The address soundfit listens on.")
    var host = "127.0.0.1"

    @Option(help: "left, right or both.")
    var ear = "both"

    @Option(parsing: .upToNextOption, help: "The frequencies in Hz (default: 250 500 1000 2000 3000 4000 6000 8000).")
    var hz: [Double] = []

    func run() throws {
        guard let server = OSCPeer(host: host, port: oscPort) else { throw ValidationError("--host: not an IPv4 address: \(host)") }
        let socket: OSCSocket
        do {
            socket = try OSCSocket(host: "127.0.0.1", port: 0)
        } catch {
            throw ValidationError("\(error)")
        }
        let ending = HearingTestEnding()
        socket.startReceiving(maximumPacketBytes: 65536, onPacket: { bytes, _ in
            guard let packet = try? OSCCodec.decode(bytes) else { return }
            for message in packet.messages {
                Self.say(Self.describe(message))
                if let code = Self.exitCode(after: message) { ending.finish(code) }
            }
        }, onOversized: { _, _ in })
        let send: @Sendable (OSCMessage) -> Void = { _ = socket.send(OSCCodec.encode($0), to: server) }

        send(OSCMessage("/test/start", [.string(ear)] + hz.map { .float(Float($0)) }))
        let terminal = RawTerminal()
        Self.say("Hearing test: press Enter or Space whenever you hear a tone, Ctrl-C to cancel.")
        // Keys: read on a thread of its own, so the end of the test is not held up by a read.
        Thread {
            var byte: UInt8 = 0
            while ending.code == nil, read(STDIN_FILENO, &byte, 1) == 1 {
                switch byte {
                case 10, 13, 32: send(OSCMessage("/test/heard"))
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

    /// A report in words: `running ear left hz 1000 level_db_hl 30 progress 0.1`.
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
