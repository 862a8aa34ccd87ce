import ArgumentParser
import Dispatch
import Foundation
import Glibc
import SoundFit
import Synchronization

/// `soundfit calibrate`: walks a person through calibrating the earphones with a sound level
/// meter, against a running instance: for each ear and frequency it plays `/calibration/tone`,
/// asks for the meter's reading, sends `/calibration/measured`, and stops the tone. A reading
/// that is not a number is asked again; Enter alone skips the frequency; Ctrl-C or the end of
/// input stops the tone and ends the run (exit 130).
///
/// Threads: the OSC socket's receive thread queues replies; the main thread asks and waits; a
/// signal source on a dispatch queue handles Ctrl-C.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Calibrates the earphones of a running soundfit with a sound level meter, per ear and frequency.",
        discussion: """
            Start soundfit first (soundfit run), put one earphone on the artificial ear or coupler (IEC 60318) of a
            sound level meter (dB SPL, Z or no frequency weighting), then run soundfit calibrate. For each ear and
            frequency it plays a steady tone of the nominal level; type what the meter reads and press Enter
            (Enter alone skips). The corrections (reading − nominal) are kept by soundfit for the hearing test and
            the output limit; /calibration reports them, /calibration/reset clears them.
            Exit status: 0 when done, 1 when soundfit refused or did not answer, 130 when stopped (Ctrl-C, end of input).
            """)

    /// How long soundfit has to answer a request.
    static let answerTimeout: TimeInterval = 3

    @Option(help: "The UDP port soundfit listens on.")
    var oscPort: UInt16 = 7700

    @Option(help: "The address soundfit listens on.")
    var host = "127.0.0.1"

    @Option(help: "left, right or both.")
    var ear = "both"

    @Option(parsing: .upToNextOption, help: "The frequencies in Hz (default: 250 500 1000 2000 4000 8000).")
    var hz: [Double] = [250, 500, 1000, 2000, 4000, 8000]

    @Option(help: "The nominal level of the tones, dB SPL (at most soundfit's output safety limit).")
    var level: Double = 70

    func validate() throws {
        guard ["left", "right", "both"].contains(ear) else { throw ValidationError("--ear: expected left, right or both") }
        guard level.isFinite, (0...130).contains(level) else { throw ValidationError("--level: expected 0 … 130 dB SPL") }
        for frequency in hz where !(frequency.isFinite && (125...8000).contains(frequency)) {
            throw ValidationError("--hz: \(frequency) is outside 125 … 8000 Hz")
        }
    }

    func run() throws {
        guard let server = OSCPeer(host: host, port: oscPort) else { throw ValidationError("--host: not an IPv4 address: \(host)") }
        let client: CalibrationClient
        do {
            client = try CalibrationClient(server: server)
        } catch {
            throw ValidationError("\(error)")
        }
        defer { client.close() }
        // Ctrl-C: stop the tone, then leave.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            client.send(OSCMessage("/calibration/stop"))
            Self.say("\nstopped: the tone is off, the readings entered so far are kept.")
            Glibc.exit(130)
        }
        interrupt.resume()

        Self.say("Calibration: put the \(ear == "both" ? "left" : ear) earphone on the meter's artificial ear or coupler. "
            + "Type the meter's reading in dB SPL and press Enter; Enter alone skips; Ctrl-C stops.")
        let ears = ear == "both" ? ["left", "right"] : [ear]
        for (index, side) in ears.enumerated() {
            if index > 0 {
                Self.say("Now the \(side) earphone on the meter; press Enter when it is in place.")
                guard readLine() != nil else { return stopAtEndOfInput(client) }
            }
            for frequency in hz {
                let tone = try client.ask(OSCMessage("/calibration/tone", [.string(side), .float(Float(frequency)), .float(Float(level))]),
                                          reply: "/calibration/tone")
                guard tone.address == "/calibration/tone" else { throw refused(tone) }
                while true {
                    FileHandle.standardOutput.write(Data("\(side) \(Self.format(frequency)) Hz, \(Self.format(level)) dB SPL meant: meter reads? ".utf8))
                    guard let line = readLine() else { return stopAtEndOfInput(client) }
                    let text = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".")
                    if text.isEmpty {
                        Self.say("skipped")
                        break
                    }
                    guard let reading = Double(text), reading.isFinite else {
                        Self.say("'\(line)' is not a number: type the reading in dB SPL, e.g. 70.5")
                        continue
                    }
                    let answer = try client.ask(OSCMessage("/calibration/measured", [
                        .string(side), .float(Float(frequency)), .float(Float(reading)),
                    ]), reply: "/calibration/measured")
                    if answer.address == "/error" {
                        // A reading soundfit refuses (out of range): asked again.
                        Self.say(Self.errorText(answer))
                        continue
                    }
                    if case .float(let correction)? = answer.arguments.dropFirst(2).first {
                        Self.say("correction \(Self.format(Double(correction))) dB kept")
                    }
                    break
                }
                let stop = try client.ask(OSCMessage("/calibration/stop"), reply: "/calibration/stop")
                guard stop.address == "/calibration/stop" else { throw refused(stop) }
            }
        }
        Self.say("Done: soundfit keeps the corrections (see /calibration).")
    }

    private func stopAtEndOfInput(_ client: CalibrationClient) {
        client.send(OSCMessage("/calibration/stop"))
        Self.say("\nend of input: the tone is off, the readings entered so far are kept.")
        Glibc.exit(130)
    }

    private func refused(_ message: OSCMessage) -> ExitCode {
        Self.say(Self.errorText(message))
        return ExitCode(1)
    }

    static func errorText(_ message: OSCMessage) -> String {
        if message.address == "/error", message.arguments.count >= 2, case .string(let reason) = message.arguments[1] {
            return "soundfit: \(reason)"
        }
        return "soundfit answered \(message)"
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// `70` for whole numbers, `70.5` otherwise.
    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// Request and reply over UDP to one soundfit: `ask` sends and waits for the reply address or
/// `/error`. Replies arrive on the socket's receive thread.
final class CalibrationClient: Sendable {
    private let socket: OSCSocket
    private let server: OSCPeer
    private let inbox = Mutex<[OSCMessage]>([])
    private let arrived = DispatchSemaphore(value: 0)

    init(server: OSCPeer) throws {
        self.server = server
        socket = try OSCSocket(host: "127.0.0.1", port: 0)
        socket.startReceiving(maximumPacketBytes: 65536, onPacket: { [self] bytes, _ in received(bytes) },
                              onOversized: { _, _ in })
    }

    private func received(_ bytes: [UInt8]) {
        guard let packet = try? OSCCodec.decode(bytes) else { return }
        inbox.withLock { $0 += packet.messages }
        arrived.signal()
    }

    func send(_ message: OSCMessage) {
        _ = socket.send(OSCCodec.encode(message), to: server)
    }

    /// Sends `message` and returns the first `reply` or `/error` that follows; throws after
    /// `CalibrateCommand.answerTimeout` without one.
    func ask(_ message: OSCMessage, reply: String) throws -> OSCMessage {
        inbox.withLock { $0.removeAll() }
        send(message)
        let deadline = DispatchTime.now() + CalibrateCommand.answerTimeout
        while true {
            if let found = inbox.withLock({ messages -> OSCMessage? in
                guard let index = messages.firstIndex(where: { $0.address == reply || $0.address == "/error" }) else { return nil }
                return messages[index]
            }) {
                return found
            }
            guard arrived.wait(timeout: deadline) == .success else {
                CalibrateCommand.say("no answer from soundfit at \(server) within \(Int(CalibrateCommand.answerTimeout)) s: "
                    + "is it running (soundfit run), on that port?")
                throw ExitCode(1)
            }
        }
    }

    func close() { socket.close() }
}
