import SoundFitEngine
import Synchronization

/// The opt-in meter stream over OSC (`/meters/subscribe ,f rate`): each listener gets
/// `/meters/input`, `/meters/output` and one `/meters/reduction` per channel at its rate, over
/// the transport it asked on (so an exposed port's per-source budget counts them).
///
/// Bounds: at most `capacity` listeners, `maximumPerHost` per host, rates 1…30 Hz, a lease of
/// `lease` (subscribing again renews it and may change the rate); a listener whose sends fail
/// `maximumConsecutiveFailures` times in a row is dropped. The audio thread meters only while
/// someone listens: the first listener starts metering, the last one leaving stops it.
///
/// Thread rules: any thread but the audio thread; the stream runs in its own task while it has
/// listeners.
final class OSCMeterStream: Sendable {
    static let rateRange: ClosedRange<Float> = 1...30
    static let defaultRate: Float = 20
    static let capacity = 16
    static let maximumPerHost = 4
    static let lease: Duration = .seconds(60)
    static let maximumConsecutiveFailures = 10

    private struct Listener {
        var rate: Float
        var expiry: ContinuousClock.Instant
        var nextSend: ContinuousClock.Instant
        /// The reading gathered since the last send.
        var pending: MeterReading?
        var failures = 0
    }

    private struct State {
        var listeners: [OSCSender: Listener] = [:]
        var running = false
    }

    private let engine: AudioEngine
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    init(engine: AudioEngine) {
        self.engine = engine
    }

    /// Adds or renews `sender`'s stream at `rate` Hz. Throws `ControlError` at the listener
    /// limits.
    func subscribe(_ sender: OSCSender, rate: Float) throws(MeterStreamError) {
        let now = clock.now
        let start = try state.withLock { state throws(MeterStreamError) -> Bool in
            if var listener = state.listeners[sender] {
                listener.rate = rate
                listener.expiry = now + Self.lease
                state.listeners[sender] = listener
                return false
            }
            guard state.listeners.count < Self.capacity else {
                throw MeterStreamError("the meter stream has \(Self.capacity) listeners already")
            }
            let sameHost = state.listeners.keys.filter { $0.peer.address == sender.peer.address }.count
            guard sameHost < Self.maximumPerHost else {
                throw MeterStreamError("this host has \(Self.maximumPerHost) meter streams already")
            }
            state.listeners[sender] = Listener(rate: rate, expiry: now + Self.lease, nextSend: now)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start {
            engine.startMetering()
            Task { await self.run() }
        }
    }

    /// Ends `sender`'s stream; false when it had none.
    func unsubscribe(_ sender: OSCSender) -> Bool {
        state.withLock { $0.listeners.removeValue(forKey: sender) != nil }
    }

    /// Whether `sender` has a stream.
    func isListening(_ sender: OSCSender) -> Bool { state.withLock { $0.listeners[sender] != nil } }

    /// Takes a reading at the fastest listener's rate, merges it into every listener's pending
    /// one and sends to those whose time has come, until no listener is left.
    private func run() async {
        while true {
            let interval = state.withLock { state -> Duration? in
                guard let fastest = state.listeners.values.map(\.rate).max() else {
                    state.running = false
                    return nil
                }
                return .microseconds(Int64(1e6 / Double(fastest)))
            }
            guard let interval else {
                engine.stopMetering()
                return
            }
            try? await Task.sleep(for: interval)
            let reading = engine.takeMeterReading()
            let now = clock.now
            let due = state.withLock { state -> [(OSCSender, MeterReading)] in
                var due: [(OSCSender, MeterReading)] = []
                for (sender, var listener) in state.listeners {
                    if listener.expiry <= now {
                        state.listeners[sender] = nil
                        continue
                    }
                    if let reading { listener.pending = listener.pending?.merged(with: reading) ?? reading }
                    if now >= listener.nextSend, let pending = listener.pending {
                        due.append((sender, pending))
                        listener.pending = nil
                        let period = Duration.microseconds(Int64(1e6 / Double(listener.rate)))
                        listener.nextSend = max(listener.nextSend + period, now)
                    }
                    state.listeners[sender] = listener
                }
                return due
            }
            for (sender, reading) in due {
                let sent = Self.messages(reading).allSatisfy { sender.send($0) }
                state.withLock { state in
                    guard var listener = state.listeners[sender] else { return }
                    listener.failures = sent ? 0 : listener.failures + 1
                    state.listeners[sender] = listener.failures >= Self.maximumConsecutiveFailures ? nil : listener
                }
            }
        }
    }

    /// The messages of one reading: `/meters/input` and `/meters/output` (`,f peak ,f rms` per
    /// channel, dBFS) and `/meters/reduction ,i channel ,f dB …` per channel (one value per band;
    /// none while the personalization is bypassed).
    static func messages(_ reading: MeterReading) -> [OSCMessage] {
        let input = reading.channels.flatMap { [OSCArgument.float(Float($0.inputPeak)), .float(Float($0.inputRMS))] }
        let output = reading.channels.flatMap { [OSCArgument.float(Float($0.outputPeak)), .float(Float($0.outputRMS))] }
        let reductions = reading.channels.enumerated().map { index, channel in
            OSCMessage("/meters/reduction", [OSCArgument.int32(Int32(index + 1))] + channel.bandReductions.map { OSCArgument.float(Float($0)) })
        }
        return [OSCMessage("/meters/input", input), OSCMessage("/meters/output", output)] + reductions
    }
}

/// A meter stream request that cannot be granted now.
struct MeterStreamError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
