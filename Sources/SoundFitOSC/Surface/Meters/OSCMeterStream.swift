import OSCCore
import SoundFitEngine
import Synchronization

/// The opt-in meter stream over OSC (`/meters/subscribe ,f rate`): each listener gets
/// `/meters/input`, `/meters/output` and one `/meters/reduction` per channel at its rate, over
/// the transport it asked on (so an exposed port's per-source budget counts them).
///
/// Bounds: at most `capacity` listeners, `maximumPerHost` per host, rates 1…30 Hz, a lease of
/// `lease` (subscribing again renews it and may change the rate); a listener whose sends fail
/// `maximumConsecutiveFailures` times in a row is dropped. The audio thread meters only while
/// someone listens: the first listener starts metering, the last one leaving stops it. While
/// the engine is in test mode (a hearing test runs) nothing is sent.
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

    /// The messages of the stream (the read-only meter nodes of the OSCQuery namespace).
    static let addresses: Set<String> = ["/meters/input", "/meters/output", "/meters/reduction"]

    private struct Listener {
        var rate: Float
        /// Nil: until `unfollow` or the connection's end (a WebSocket that LISTENs).
        var expiry: ContinuousClock.Instant?
        /// The meter messages it follows.
        var addresses = OSCMeterStream.addresses
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

    /// Adds or renews `sender`'s stream of every meter message at `rate` Hz for a lease.
    /// Throws at the listener limits.
    func subscribe(_ sender: OSCSender, rate: Float) throws(MeterStreamError) {
        try add(sender, rate: rate, expiry: clock.now + Self.lease, addresses: Self.addresses)
    }

    /// Adds `address` (one of `addresses`) to what `sender` follows, at `rate` Hz, without a
    /// lease: until `unfollow` or the connection's end (OSCQuery `LISTEN` on a meter node).
    func follow(_ sender: OSCSender, address: String, rate: Float) throws(MeterStreamError) {
        try add(sender, rate: rate, expiry: nil, addresses: [address])
    }

    /// Stops `sender` following `address`; the stream ends with its last address.
    func unfollow(_ sender: OSCSender, address: String) {
        state.withLock { state in
            guard var listener = state.listeners[sender] else { return }
            listener.addresses.remove(address)
            state.listeners[sender] = listener.addresses.isEmpty ? nil : listener
        }
    }

    private func add(_ sender: OSCSender, rate: Float, expiry: ContinuousClock.Instant?,
                     addresses: Set<String>) throws(MeterStreamError) {
        let now = clock.now
        let start = try state.withLock { state throws(MeterStreamError) -> Bool in
            if var listener = state.listeners[sender] {
                listener.rate = rate
                // A lease renews; following without a lease (or after one) keeps it until unfollowed.
                let previous = listener.expiry
                listener.expiry = if let expiry, let previous { max(previous, expiry) } else { nil }
                listener.addresses.formUnion(addresses)
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
            state.listeners[sender] = Listener(rate: rate, expiry: expiry, addresses: addresses, nextSend: now)
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
            // During a hearing test the meters would show when each tone plays (and how loud):
            // nothing is sent, to anyone, until it ends (blind surfaces, `HearingTestRunner`).
            if engine.isInTestMode { continue }
            let now = clock.now
            let due = state.withLock { state -> [(OSCSender, MeterReading, Set<String>)] in
                var due: [(OSCSender, MeterReading, Set<String>)] = []
                for (sender, var listener) in state.listeners {
                    if let expiry = listener.expiry, expiry <= now {
                        state.listeners[sender] = nil
                        continue
                    }
                    if let reading { listener.pending = listener.pending?.merged(with: reading) ?? reading }
                    if now >= listener.nextSend, let pending = listener.pending {
                        due.append((sender, pending, listener.addresses))
                        listener.pending = nil
                        let period = Duration.microseconds(Int64(1e6 / Double(listener.rate)))
                        listener.nextSend = max(listener.nextSend + period, now)
                    }
                    state.listeners[sender] = listener
                }
                return due
            }
            for (sender, reading, addresses) in due {
                let sent = Self.messages(reading).filter { addresses.contains($0.address) }.allSatisfy { sender.send($0) }
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
public struct MeterStreamError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension OSCControlSurface {
    /// The meter messages (`/meters/input`, `/meters/output`, `/meters/reduction`): read-only
    /// nodes a surface may follow.
    public static var meterAddresses: Set<String> { OSCMeterStream.addresses }

    /// The rate of a stream followed without a rate (OSCQuery `LISTEN`), Hz.
    public static var followedMeterRate: Float { 25 }

    /// Streams meter message `address` to `sender` (over its transport) until `unfollowMeters`
    /// or the end of its connection: OSCQuery `LISTEN` on a meter node. Throws the reason at the
    /// stream limits.
    public func followMeters(_ address: String, for sender: OSCSender,
                             rate: Float = OSCControlSurface.followedMeterRate) throws(MeterStreamError) {
        try meters.follow(sender, address: address, rate: rate)
    }

    /// Stops `sender` following meter message `address` (OSCQuery `IGNORE`).
    public func unfollowMeters(_ address: String, for sender: OSCSender) {
        meters.unfollow(sender, address: address)
    }

    /// Ends every meter stream of `sender` (its connection closed).
    public func stopMeters(for sender: OSCSender) {
        _ = meters.unsubscribe(sender)
    }
}
