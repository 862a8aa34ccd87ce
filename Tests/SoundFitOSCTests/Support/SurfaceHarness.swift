import OSCCore
import SoundFitTestSupport
import Logging
import SoundFitEngine
import SoundFitModel
import SoundFitOSC
import SoundFitProcessing
import SoundFitRuntime

/// An OSC surface on an in-memory transport, over a real runtime whose engine renders on a
/// stand-in audio thread: what a test sends goes through the surface exactly as a datagram
/// would, and what the surface sends is read back from the transport.
final class SurfaceHarness {
    static let client = OSCPeer(host: "127.0.0.1", port: 9000)!
    /// How long to wait for an expected message. Generous: when the whole unit suite runs, the
    /// DSP tests can keep the tasks that send replies waiting for seconds.
    static let patience: Duration = .seconds(60)

    let runtime: SoundFitRuntime
    let transport = InMemoryOSCTransport()
    let surface: OSCControlSurface
    private let renderLoop: RenderLoop
    private let running: Task<Void, Never>
    /// Messages read from the transport for another peer than the one a test waited for.
    private var unread: [OSCPeer: [OSCMessage]] = [:]

    init(exposure: OSCExposure = .loopback) async throws {
        runtime = SoundFitRuntime(
            engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)),
            config: DeliveryConfiguration(deliveryTimeout: .seconds(20)))
        var logger = Logger(label: "soundfit.osc.tests")
        logger.logLevel = .critical
        let surface = OSCControlSurface(runtime: runtime, transport: transport, logger: logger, exposure: exposure) {
            SurfaceStatus(fields: [("connected", .int32(1))])
        }
        self.surface = surface
        let runtime = self.runtime
        running = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await runtime.run() }
                group.addTask { await surface.run() }
            }
        }
        renderLoop = RenderLoop(engine: runtime.engine)
        try await runtime.audioSystemConnected()
        while !transport.isReceiving { try await Task.sleep(for: .milliseconds(1)) }
    }

    /// Stops the surface's loops and the stand-in audio thread.
    func stop() {
        running.cancel()
        renderLoop.stop()
    }

    /// The stand-in audio thread stops rendering while the runtime stays connected: a stalled
    /// server, whose engine acknowledges nothing.
    func stallAudio() {
        renderLoop.stop()
    }

    /// One message from `peer`, through the transport.
    func send(_ message: OSCMessage, from peer: OSCPeer = client) {
        transport.receive(message, from: peer)
    }

    /// One bundle of `messages` from `peer` (timetag "immediately" unless given).
    func sendBundle(_ messages: [OSCMessage], from peer: OSCPeer = client, timetag: OSCTimetag = .immediately) {
        var bytes = Array("#bundle".utf8) + [0] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: timetag.rawValue >> (8 * $0)) }
        for message in messages {
            let element = OSCCodec.encode(message)
            let size = UInt32(element.count)
            bytes += [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            bytes += element
        }
        transport.receive(bytes, from: peer)
    }

    /// The next message sent to `peer`, or nil after `timeout`. Messages to other peers read
    /// meanwhile are kept for them.
    func next(to peer: OSCPeer = client, timeout: Duration = SurfaceHarness.patience) async -> OSCMessage? {
        if let message = unread[peer]?.first {
            unread[peer]?.removeFirst()
            return message
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            guard let packet = await transport.nextOutbound(timeout: deadline - clock.now) else { return nil }
            guard let message = packet.message else { continue }
            if packet.peer == peer { return message }
            unread[packet.peer, default: []].append(message)
        }
        return nil
    }

    /// Messages sent to `peer` up to and including the first at `address`.
    func messages(to peer: OSCPeer = client, through address: String,
                  timeout: Duration = SurfaceHarness.patience) async -> [OSCMessage] {
        var messages: [OSCMessage] = []
        while let message = await next(to: peer, timeout: timeout) {
            messages.append(message)
            if message.address == address { break }
        }
        return messages
    }

    /// Messages sent to `peer` until every one of `expected` has arrived (in any order: value
    /// feedback and the terminal `/state` of a change travel separately), or the timeout.
    func messages(to peer: OSCPeer = client, untilAll expected: [OSCMessage],
                  timeout: Duration = SurfaceHarness.patience) async -> [OSCMessage] {
        var messages: [OSCMessage] = []
        while !expected.allSatisfy(messages.contains), let message = await next(to: peer, timeout: timeout) {
            messages.append(message)
        }
        return messages
    }

    /// The `/state` reports sent to `peer` for one change, through its terminal state.
    func states(to peer: OSCPeer = client, timeout: Duration = SurfaceHarness.patience) async -> [OSCMessage] {
        var states: [OSCMessage] = []
        while let message = await next(to: peer, timeout: timeout) {
            guard message.address == "/state" else { continue }
            states.append(message)
            if case .string(let name) = message.arguments[1], ["applied", "failed", "superseded"].contains(name) {
                break
            }
        }
        return states
    }

    /// Every message sent to `peer` within `duration`, the unread ones included (to check that
    /// something is not sent).
    func everything(to peer: OSCPeer = client, within duration: Duration) async -> [OSCMessage] {
        try? await Task.sleep(for: duration)
        for packet in transport.readAllOutbound() {
            if let message = packet.message { unread[packet.peer, default: []].append(message) }
        }
        defer { unread[peer] = nil }
        return unread[peer] ?? []
    }
}

/// Runs `body` with a new harness, stopped afterwards.
func withSurface(_ body: (SurfaceHarness) async throws -> Void) async throws {
    let harness = try await SurfaceHarness()
    defer { harness.stop() }
    try await body(harness)
}

extension OSCTimetag {
    /// The wall-clock moment `seconds` from now, as a bundle's timetag.
    static func ahead(_ seconds: Double) -> OSCTimetag {
        OSCTimetag(unixSeconds: OSCTimetag.wallClockNow + seconds)
    }
}
