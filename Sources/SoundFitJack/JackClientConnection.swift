import CJack
import Foundation
import SoundFitDSP
import SoundFitEngine
import Synchronization

/// One open JACK client: its ports, its callbacks and the process state they share.
///
/// Created and closed by `JackEngineHost` on its supervisor thread. The JACK callbacks receive
/// this object as an unretained pointer; `close()` deactivates and closes the client before
/// the object can go away, so no callback can outlive it.
final class JackClientConnection: @unchecked Sendable {
    let client: OpaquePointer
    let processState: UnsafeMutablePointer<JackProcessState>
    let clientName: String
    let inputPortNames: [String]
    let outputPortNames: [String]
    /// The MIDI control input's short name, when MIDI control is on.
    let midiPortName: String?

    // Written by JACK threads, read by the control side (and the process callback).
    let serverSampleRate = Atomic<UInt32>(0)
    let serverBufferSize = Atomic<UInt32>(0)
    let xruns = Atomic<UInt64>(0)
    /// Whether the server runs in freewheel mode (`jack_set_freewheel_callback`): cycles come
    /// as fast as the graph computes them, not at the period. Read by the process callback.
    let freewheeling = Atomic<Bool>(false)
    /// Cycles processed while freewheeling (not in `timings`, whose statistics are about
    /// real-time cycles).
    let freewheelCycles = Atomic<UInt64>(0)
    /// Whether the port-connect callback reported a port feeding `midi_in`. Read by the process
    /// callback, which leaves the MIDI buffer alone without one: a flag in our own memory costs
    /// less per cycle than asking libjack's graph (`jack_port_connected`).
    let midiSourceConnected = Atomic<Bool>(false)
    let serverWentAway = Atomic<Bool>(false)
    let timings = CallbackTimings()
    /// Our ports' connections, from the port-connect callback (a notification thread).
    private let trackedConnections = Mutex(PortConnections())
    /// Ports of other clients that went away or came back, from the port-registration
    /// callback, for the host's supervisor to log and restore connections (a callback may
    /// not connect ports itself).
    private let graphChanges = Mutex<[GraphChange]>([])
    /// Set before the client is closed; callbacks that call into libjack check it and count
    /// themselves in `callbacksInFlight`, so `close()` never unmaps JACK's shared memory under them.
    private let closing = Atomic<Bool>(false)
    private let callbacksInFlight = Atomic<Int>(0)
    private var isClosed = false
    /// The MIDI input fed by `midi_in`, told whether anything is connected to that port.
    private let midi: MIDIControlInput?
    /// Signalled when the server goes away or enters or leaves freewheel mode (the host's
    /// supervisor sleeps on it). Only the shutdown and freewheel callbacks signal it, never the
    /// process callback.
    let stateChanged: DispatchSemaphore?

    /// Opens a client on `serverName` (nil: JACK's default / `JACK_DEFAULT_SERVER`) without
    /// starting a server. `activate()` then registers the ports and starts processing.
    init(name: String, serverName: String?, channelCount: Int, engine: AudioEngine,
         midi: MIDIControlInput? = nil, stateChanged: DispatchSemaphore? = nil) throws(JackHostError) {
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
        guard let client = soundfit_jack_client_open(name, options, &status, serverName) else {
            throw .serverUnavailable(server: serverName ?? JackEngineHost.defaultServerName, status: status.rawValue)
        }
        self.client = client
        clientName = String(cString: jack_get_client_name(client))
        let sampleRate = Double(jack_get_sample_rate(client))
        let bufferSize = Int(jack_get_buffer_size(client))
        serverSampleRate.store(UInt32(sampleRate), ordering: .relaxed)
        serverBufferSize.store(UInt32(bufferSize), ordering: .relaxed)

        // The renderer chunks blocks larger than this, so buffer-size changes never allocate.
        let spec = ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: 1024, channelCount: channelCount)
        processState = .allocate(capacity: 1)
        processState.initialize(to: JackProcessState(
            renderer: engine.makeRenderer(spec: spec), channelCount: channelCount, sampleRate: sampleRate,
            midi: midi?.realtime))

        inputPortNames = (1...channelCount).map { "input_\($0)" }
        outputPortNames = (1...channelCount).map { "output_\($0)" }
        midiPortName = midi == nil ? nil : "midi_in"
        self.midi = midi
        self.stateChanged = stateChanged
    }

    /// Registers the ports, installs the callbacks and activates the client. On failure the
    /// caller drops the connection, which closes the client.
    func activate() throws(JackHostError) {
        for channel in 0..<processState.pointee.channelCount {
            processState.pointee.inputPorts[channel] = try registerPort(inputPortNames[channel], input: true)
            processState.pointee.outputPorts[channel] = try registerPort(outputPortNames[channel], input: false)
        }
        if let midiPortName {
            processState.pointee.midiPort = try registerPort(midiPortName, input: true, type: JACK_DEFAULT_MIDI_TYPE)
        }
        try installCallbacks()
        guard jack_activate(client) == 0 else { throw .activationFailed }
        describePorts()
    }

    /// Sets each port's pretty name, order and port group (JACK metadata). A server without
    /// metadata support only loses the descriptions. Returns whether every property was set.
    /// Control thread.
    @discardableResult
    func describePorts() -> Bool {
        var described = true
        func set(_ port: OpaquePointer, _ key: UnsafePointer<CChar>, _ value: String, _ type: String? = nil) {
            if jack_set_property(client, jack_port_uuid(port), key, value, type) != 0 { described = false }
        }
        for channel in 0..<processState.pointee.channelCount {
            for (port, isInput) in [(processState.pointee.inputPorts[channel], true),
                                    (processState.pointee.outputPorts[channel], false)] {
                guard let port else { continue }
                set(port, soundfit_jack_metadata_pretty_name(), PortMetadata.prettyName(channel: channel, isInput: isInput))
                set(port, soundfit_jack_metadata_order(), PortMetadata.order(channel: channel), PortMetadata.integerType)
                set(port, soundfit_jack_metadata_port_group(), PortMetadata.portGroup(channel: channel, isInput: isInput))
            }
        }
        if let port = processState.pointee.midiPort {
            set(port, soundfit_jack_metadata_pretty_name(), PortMetadata.midiPrettyName)
            set(port, soundfit_jack_metadata_order(), PortMetadata.midiOrder(channelCount: processState.pointee.channelCount),
                PortMetadata.integerType)
        }
        return described
    }

    /// Whether this client sees the first output port's pretty name on the server. Control thread.
    func portDescriptionsPresent() -> Bool {
        guard let port = processState.pointee.outputPorts[0] else { return true }
        var value: UnsafeMutablePointer<CChar>?
        var type: UnsafeMutablePointer<CChar>?
        guard jack_get_property(jack_port_uuid(port), soundfit_jack_metadata_pretty_name(), &value, &type) == 0 else {
            return false
        }
        defer {
            jack_free(value)
            jack_free(type)
        }
        return value != nil
    }

    /// Removes the descriptions again (the server keeps metadata beyond a port's life).
    private func forgetPortDescriptions() {
        for channel in 0..<processState.pointee.channelCount {
            for port in [processState.pointee.inputPorts[channel], processState.pointee.outputPorts[channel]] {
                if let port { _ = jack_remove_properties(client, jack_port_uuid(port)) }
            }
        }
        if let port = processState.pointee.midiPort { _ = jack_remove_properties(client, jack_port_uuid(port)) }
    }

    deinit {
        close()
        processState.deinitialize(count: 1)
        processState.deallocate()
    }

    private func registerPort(_ shortName: String, input: Bool,
                              type: String = JACK_DEFAULT_AUDIO_TYPE) throws(JackHostError) -> OpaquePointer {
        let flags = input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue
        guard let port = jack_port_register(client, shortName, type, UInt(flags), 0) else {
            throw .portRegistrationFailed(shortName)
        }
        return port
    }

    private func installCallbacks() throws(JackHostError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let results = [
            jack_set_process_callback(client, soundfitProcessCallback, context),
            jack_set_thread_init_callback(client, soundfitThreadInitCallback, context),
            jack_set_sample_rate_callback(client, soundfitSampleRateCallback, context),
            jack_set_buffer_size_callback(client, soundfitBufferSizeCallback, context),
            jack_set_xrun_callback(client, soundfitXrunCallback, context),
            jack_set_freewheel_callback(client, soundfitFreewheelCallback, context),
            jack_set_latency_callback(client, soundfitLatencyCallback, context),
            jack_set_port_connect_callback(client, soundfitPortConnectCallback, context),
            jack_set_port_registration_callback(client, soundfitPortRegistrationCallback, context),
        ]
        // JACK2 and PipeWire ≥ 1.0 call the info variant, PipeWire 0.3 only the plain one;
        // both land in the same idempotent flag.
        jack_on_info_shutdown(client, soundfitShutdownCallback, context)
        jack_on_shutdown(client, soundfitPlainShutdownCallback, context)
        if results.contains(where: { $0 != 0 }) { throw .callbackInstallationFailed }
    }

    /// Deactivates (unless the server is gone) and closes the client. Idempotent; control thread.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        closing.store(true, ordering: .sequentiallyConsistent)
        while callbacksInFlight.load(ordering: .sequentiallyConsistent) > 0 {
            Thread.sleep(forTimeInterval: 0.001)
        }
        if !serverWentAway.load(ordering: .acquiring) {
            jack_deactivate(client)
            forgetPortDescriptions()
        }
        jack_client_close(client)
        midiSourceConnected.store(false, ordering: .releasing)
        midi?.setSourceConnected(false)
    }

    /// Full JACK names of this client's ports, e.g. `soundfit:input_1`.
    var fullInputPortNames: [String] { inputPortNames.map { "\(clientName):\($0)" } }
    var fullOutputPortNames: [String] { outputPortNames.map { "\(clientName):\($0)" } }
    var fullMIDIPortName: String? { midiPortName.map { "\(clientName):\($0)" } }

    /// Connects physical capture ports to our inputs and our outputs to physical playback
    /// ports, channel by channel, as far as both exist; with `involving`, only the pairs with
    /// that port (one that came back). Returns the connections made.
    func connectPhysicalPorts(involving port: String? = nil) -> [(String, String)] {
        let captures = physicalPorts(flags: JackPortIsOutput.rawValue)
        let playbacks = physicalPorts(flags: JackPortIsInput.rawValue)
        let pairs = Array(zip(captures, fullInputPortNames)) + Array(zip(fullOutputPortNames, playbacks))
        return pairs.filter { pair in
            (port == nil || pair.0 == port || pair.1 == port) && connect(pair.0, pair.1)
        }
    }

    /// Connects two ports by full name; true on success or when already connected.
    @discardableResult
    func connect(_ source: String, _ destination: String) -> Bool {
        let result = jack_connect(client, source, destination)
        return result == 0 || result == EEXIST
    }

    /// A connection between two ports changed. Notification thread (not real-time): resolves
    /// the ports and records the change when one of them is ours. Once the server is going away
    /// its disconnections are the shutdown's, not the user's, and are not recorded.
    func portConnectionChanged(_ first: jack_port_id_t, _ second: jack_port_id_t, connected: Bool) {
        callbacksInFlight.add(1, ordering: .sequentiallyConsistent)
        defer { callbacksInFlight.subtract(1, ordering: .sequentiallyConsistent) }
        guard !closing.load(ordering: .sequentiallyConsistent), !serverWentAway.load(ordering: .acquiring),
              let a = jack_port_by_id(client, first), let b = jack_port_by_id(client, second) else { return }
        let (mine, other): (OpaquePointer, OpaquePointer)
        if jack_port_is_mine(client, a) != 0 {
            (mine, other) = (a, b)
        } else if jack_port_is_mine(client, b) != 0 {
            (mine, other) = (b, a)
        } else {
            return
        }
        // Our own port's direction is certain (the other may be half released).
        let mineIsInput = Int32(jack_port_flags(mine)) & Int32(JackPortIsInput.rawValue) != 0
        let (source, destination) = mineIsInput ? (other, mine) : (mine, other)
        let otherName = String(cString: jack_port_name(other))
        let connection = PortConnections.Connection(source: String(cString: jack_port_name(source)),
                                                    destination: String(cString: jack_port_name(destination)))
        // JACK reports a port's disconnections before the port goes; when it is gone already,
        // the removal is the port's, not the user's.
        let otherPortGone = !connected && jack_port_by_name(client, otherName) == nil
        let now = ContinuousClock.now
        trackedConnections.withLock {
            connected ? $0.connected(connection) : $0.disconnected(connection, otherPortGone: otherPortGone, at: now)
        }
        publishMIDISourceState()
    }

    /// A port of another client was registered or unregistered. Notification thread: records
    /// which of our connections wait for a port that went away, and queues the change for the
    /// supervisor when it has something to restore or announce.
    func portRegistrationChanged(_ id: jack_port_id_t, registered: Bool) {
        callbacksInFlight.add(1, ordering: .sequentiallyConsistent)
        defer { callbacksInFlight.subtract(1, ordering: .sequentiallyConsistent) }
        guard !closing.load(ordering: .sequentiallyConsistent), !serverWentAway.load(ordering: .acquiring),
              let port = jack_port_by_id(client, id), jack_port_is_mine(client, port) == 0,
              let rawName = jack_port_name(port) else { return }
        let name = String(cString: rawName)
        guard !name.isEmpty else { return }
        let change: GraphChange?
        if registered {
            let isPhysical = Int32(jack_port_flags(port)) & Int32(JackPortIsPhysical.rawValue) != 0
            let waiting = trackedConnections.withLock { $0.awaiting(name) }
            change = waiting.isEmpty && !isPhysical ? nil : .portAppeared(name, isPhysical: isPhysical)
        } else {
            let now = ContinuousClock.now
            let waiting = trackedConnections.withLock { $0.portWentAway(name, at: now) }
            change = waiting.isEmpty ? nil : .portWentAway(name, connections: waiting.map { ($0.source, $0.destination) })
        }
        guard let change else { return }
        graphChanges.withLock { $0.append(change) }
        stateChanged?.signal()
    }

    /// Ports that went away or came back since the last call, in order. Control thread.
    func takeGraphChanges() -> [GraphChange] {
        graphChanges.withLock { changes in
            defer { changes = [] }
            return changes
        }
    }

    /// Lets `source → destination` wait for its missing port: restored when it appears.
    func awaitPort(_ source: String, _ destination: String) {
        trackedConnections.withLock { $0.await(PortConnections.Connection(source: source, destination: destination)) }
    }

    /// Our connections that wait for the port `name`. Any thread.
    func connectionsAwaiting(_ name: String) -> [(String, String)] {
        trackedConnections.withLock { $0.awaiting(name).map { ($0.source, $0.destination) } }
    }

    /// Adds what the server reports now to the tracked connections: the ones restored or made
    /// right after activation, whose callbacks may still be on their way. Control thread.
    func trackCurrentConnections() {
        let found = currentConnections().map { PortConnections.Connection(source: $0.0, destination: $0.1) }
        trackedConnections.withLock { $0.merge(found) }
        publishMIDISourceState()
    }

    /// Tells the process callback and the MIDI input whether any port feeds `midi_in`: with
    /// none, no event can come, the callback skips the port and the drain sleeps instead of
    /// polling (zero cost when idle). Events a source sends before the port-connect callback
    /// reported it (the server's notification, under a millisecond) are not read.
    private func publishMIDISourceState() {
        guard let midi, let port = fullMIDIPortName else { return }
        let connected = trackedConnections.withLock { $0.connections.contains { $0.destination == port } }
        midiSourceConnected.store(connected, ordering: .releasing)
        midi.setSourceConnected(connected)
    }

    /// Our ports' connections as the port-connect callback reported them, in the order they
    /// were made: what a returning server gets back. Readable after the server went away.
    var connectionsToRestore: [(String, String)] {
        trackedConnections.withLock { $0.connectionsToRestore.map { ($0.source, $0.destination) } }
    }

    /// How many connections of our ports the port-connect callback reported and SoundFit keeps
    /// (for `/status`: a script that connected ports can wait until SoundFit noted them). Any thread.
    var notedConnectionCount: Int { trackedConnections.withLock { $0.connections.count } }

    /// Every connection our ports have now, as (source, destination) pairs.
    func currentConnections() -> [(String, String)] {
        var pairs: [(String, String)] = []
        for channel in 0..<processState.pointee.channelCount {
            for peer in connections(of: processState.pointee.inputPorts[channel]) {
                pairs.append((peer, fullInputPortNames[channel]))
            }
            for peer in connections(of: processState.pointee.outputPorts[channel]) {
                pairs.append((fullOutputPortNames[channel], peer))
            }
        }
        if let name = fullMIDIPortName {
            for peer in connections(of: processState.pointee.midiPort) { pairs.append((peer, name)) }
        }
        return pairs
    }

    private func connections(of port: OpaquePointer?) -> [String] {
        guard let port, let list = jack_port_get_all_connections(client, port) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return Self.strings(list)
    }

    private func physicalPorts(flags: UInt32) -> [String] {
        guard let list = jack_get_ports(client, nil, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsPhysical.rawValue | flags))
        else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return Self.strings(list)
    }

    private static func strings(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>) -> [String] {
        var result: [String] = []
        var index = 0
        while let name = list[index] {
            result.append(String(cString: name))
            index += 1
        }
        return result
    }

    /// The capture and playback latency ranges of the first output port, in frames.
    var outputLatency: (capture: ClosedRange<UInt32>, playback: ClosedRange<UInt32>) {
        var capture = jack_latency_range_t(min: 0, max: 0)
        var playback = jack_latency_range_t(min: 0, max: 0)
        if let port = processState.pointee.outputPorts[0] {
            jack_port_get_latency_range(port, JackCaptureLatency, &capture)
            jack_port_get_latency_range(port, JackPlaybackLatency, &playback)
        }
        return (capture.min...max(capture.min, capture.max), playback.min...max(playback.min, playback.max))
    }
}

/// A port of another client that went away or came back, as the supervisor handles it.
enum GraphChange {
    /// Our connections to it wait for it (source, destination).
    case portWentAway(String, connections: [(String, String)])
    /// A port with connections waiting for it, or a physical port (`--connect`), registered.
    case portAppeared(String, isPhysical: Bool)
}

/// Why the JACK host could not do what was asked.
public enum JackHostError: Error, Equatable, Sendable, CustomStringConvertible {
    case serverUnavailable(server: String, status: UInt32)
    case portRegistrationFailed(String)
    case callbackInstallationFailed
    case activationFailed
    case clientNameEqualsServerName(String)
    case privateServerFailed(String)
    case pipeWireUnavailable(library: String)

    public var description: String {
        switch self {
        case .serverUnavailable(let server, let status):
            "cannot connect to JACK server '\(server)' (status 0x\(String(status, radix: 16)))"
        case .portRegistrationFailed(let name): "cannot register JACK port '\(name)'"
        case .callbackInstallationFailed: "cannot install JACK callbacks"
        case .activationFailed: "cannot activate the JACK client"
        case .clientNameEqualsServerName(let name):
            "client name '\(name)' equals the server name; JACK would delete the server's socket. Choose another --name"
        case .privateServerFailed(let reason): "cannot start a private JACK server: \(reason)"
        case .pipeWireUnavailable(let library):
            "PipeWire's JACK library is in use (\(library), as pw-jack arranges) but no PipeWire server answers: "
                + "start PipeWire (systemctl --user start pipewire wireplumber), or run soundfit without pw-jack "
                + "to use jackd (SoundFit starts a private one when none runs)"
        }
    }
}
