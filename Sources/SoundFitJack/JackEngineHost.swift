import CJack
import Foundation
import Logging
import SoundFitEngine
import Synchronization

/// How the JACK host connects.
public struct JackHostConfiguration: Sendable {
    /// JACK client name; must differ from the server name.
    public var clientName = "soundfit"
    /// Server to use; nil means JACK's own default (`JACK_DEFAULT_SERVER`, else "default").
    public var serverName: String?
    /// Audio inputs and outputs (1…64).
    public var channelCount = 2
    /// Connect to physical capture/playback ports after every (re)connection.
    public var connectPhysicalPorts = false
    /// Start a private dummy-backend server when none is reachable at start.
    public var startsPrivateServer = true
    /// Where the private server's output goes (nil: discarded).
    public var privateServerLogPath: String?
    /// How often to look for a server that went away.
    public var reconnectInterval: Duration = .milliseconds(250)

    public init() {}
}

/// A change in the host's connection to the JACK server, for the session lifecycle.
public enum JackHostEvent: Sendable, Equatable {
    case connected(server: String, sampleRate: Int, bufferSize: Int)
    case disconnected(reason: String)
    /// The server entered (true) or left (false) freewheel mode.
    case freewheeling(Bool)
}

/// A snapshot of the host for `/status` and logs.
public struct JackHostStatus: Sendable {
    public var isConnected: Bool
    public var serverName: String
    public var clientName: String
    public var sampleRate: Int
    public var bufferSize: Int
    /// Xruns reported by the server since SoundFit started (none are counted while freewheeling).
    public var xruns: UInt64
    /// Whether the server runs in freewheel mode (faster than real time, no deadlines).
    public var isFreewheeling: Bool
    /// Cycles processed while freewheeling, since the client connected; `callbackTimes` and
    /// `callbackLoad` leave them out.
    public var freewheelCycles: UInt64
    public var reconnections: Int
    public var usesPrivateServer: Bool
    public var callbackTimes: TimingSummary
    public var captureLatency: ClosedRange<UInt32>
    public var playbackLatency: ClosedRange<UInt32>
    public var inputPorts: [String]
    public var outputPorts: [String]
    /// The connections of SoundFit's ports it noted from JACK's port-connect callback (what it
    /// restores after a server restart); 0 without a connection.
    public var portConnections: Int

    /// Median process-callback duration (monotonic clock) as a share of the period.
    public var callbackLoad: Double {
        guard sampleRate > 0, bufferSize > 0 else { return 0 }
        return callbackTimes.p50 / (Double(bufferSize) / Double(sampleRate) * 1e9)
    }
}

/// Runs the audio engine inside a JACK graph and keeps it there: when the server goes away
/// it logs it, keeps running, and reconnects with the same ports, connections and settings
/// when the server returns.
///
/// Thread rules: `start`/`stop` on one control thread; `status` from any thread. A supervisor
/// thread owns reconnection.
public final class JackEngineHost: @unchecked Sendable {
    public static let defaultServerName: String = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default"

    public let configuration: JackHostConfiguration
    private let engine: AudioEngine
    /// Where the MIDI input port's messages go; nil: no MIDI port.
    private let midi: MIDIControlInput?
    private let logger: Logger
    private let connection = Mutex<JackClientConnection?>(nil)
    private var privateServer: PrivateJackServer?
    private var supervisor: Thread?
    private let stopping = Atomic<Bool>(false)
    private let supervisorDone = DispatchSemaphore(value: 0)
    /// Signalled by JACK's shutdown and freewheel callbacks and by `stop()`: the supervisor
    /// sleeps on it instead of polling, so an idle SoundFit does not wake for it.
    private let supervisorWake = DispatchSemaphore(value: 0)
    /// Lock order: `connection`, then `lifetime` inside it. A change of connection and the
    /// counters that go with it are made under both, so `status` is one snapshot.
    private let lifetime = Mutex(Lifetime())
    private let eventContinuation: AsyncStream<JackHostEvent>.Continuation
    /// Whether this process loaded PipeWire's libjack (`pw-jack`).
    private let usesPipeWire = JackLibrary.isPipeWire

    /// Connection changes, in order. Consumed by the session lifecycle.
    public let events: AsyncStream<JackHostEvent>

    private struct Lifetime {
        var xrunsOfClosedClients: UInt64 = 0
        var reconnections = 0
        /// Our ports' connections when the server was lost (tracked from JACK's port-connect
        /// callback), so a returning server gets them back.
        var rememberedConnections: [(String, String)] = []
    }

    /// With `midi`, every client also registers the MIDI control input port `midi_in`.
    public init(configuration: JackHostConfiguration, engine: AudioEngine, midi: MIDIControlInput? = nil, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.midi = midi
        self.logger = logger
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// The server in use: the private one, the configured one, or JACK's default.
    public var serverName: String {
        privateServer?.name ?? configuration.serverName ?? Self.defaultServerName
    }

    private var connectServerName: String? { privateServer?.name ?? configuration.serverName }

    /// Connects to the server (starting a private one when none is reachable and that is
    /// allowed), activates the client and starts supervising the connection.
    public func start() throws(JackHostError) {
        if configuration.clientName == serverName {
            throw .clientNameEqualsServerName(configuration.clientName)
        }
        jack_set_error_function(soundfitJackMessageCallback)
        jack_set_info_function(soundfitJackMessageCallback)
        do {
            try connect(isReconnection: false)
        } catch {
            // PipeWire's libjack cannot reach a jackd, so a private one would not help.
            if usesPipeWire { throw .pipeWireUnavailable(library: JackLibrary.path ?? "pipewire-0.3/jack") }
            guard configuration.startsPrivateServer else { throw error }
            logger.notice("no JACK server '\(serverName)' is running; starting a private dummy-backend server")
            let server = PrivateJackServer(logPath: configuration.privateServerLogPath)
            try server.start()
            privateServer = server
            logger.notice("started private JACK server '\(server.name)': \(server.commandLine.joined(separator: " "))")
            try connectWithRetries(deadline: .now + .seconds(10), server: server)
        }
        let thread = Thread { [self] in superviseConnection() }
        thread.name = "soundfit-jack-supervisor"
        supervisor = thread
        thread.start()
    }

    private func connectWithRetries(deadline: ContinuousClock.Instant, server: PrivateJackServer) throws(JackHostError) {
        while true {
            do {
                return try connect(isReconnection: false)
            } catch {
                if !server.isRunning {
                    throw .privateServerFailed("jackd exited; see \(configuration.privateServerLogPath ?? "its output")")
                }
                if ContinuousClock.now >= deadline { throw error }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Opens and activates a client, restores connections, announces it. A reconnection is
    /// counted in the same step that makes the client current.
    private func connect(isReconnection: Bool) throws(JackHostError) {
        let client = try JackClientConnection(
            name: configuration.clientName, serverName: connectServerName,
            channelCount: configuration.channelCount, engine: engine, midi: midi, stateChanged: supervisorWake)
        try client.activate()
        let remembered = lifetime.withLock { $0.rememberedConnections }
        for (source, destination) in remembered {
            // Waiting first: a port registered between a failed connect and the wait would
            // otherwise be missed. Made connections leave the wait (trackCurrentConnections).
            client.awaitPort(source, destination)
            if !client.connect(source, destination) {
                logger.info("could not restore connection \(source) -> \(destination) yet; it is made when its port appears")
            }
        }
        if configuration.connectPhysicalPorts {
            let made = client.connectPhysicalPorts()
            if made.isEmpty { logger.warning("--connect: no physical ports to connect to") }
            for (source, destination) in made { logger.info("connected \(source) -> \(destination)") }
        }
        client.trackCurrentConnections()
        let sampleRate = Int(client.serverSampleRate.load(ordering: .relaxed))
        let bufferSize = Int(client.serverBufferSize.load(ordering: .relaxed))
        connection.withLock { current in
            current = client
            if isReconnection { lifetime.withLock { $0.reconnections += 1 } }
        }
        logger.notice("""
            JACK client '\(client.clientName)' active on server '\(serverName)': \
            \(sampleRate) Hz, \(bufferSize) frames, ports \
            \((client.fullInputPortNames + client.fullOutputPortNames + [client.fullMIDIPortName].compactMap { $0 }).joined(separator: " "))
            """)
        eventContinuation.yield(.connected(server: serverName, sampleRate: sampleRate, bufferSize: bufferSize))
    }

    /// Supervisor thread: notices a lost server, closes the dead client and reconnects.
    private func superviseConnection() {
        defer { supervisorDone.signal() }
        var connectedAt = ContinuousClock.now
        var lastReport = ContinuousClock.now - .seconds(60)
        var reportedFreewheeling = false
        while !stopping.load(ordering: .acquiring) {
            let current = connection.withLock { $0 }
            if let current {
                if current.serverWentAway.load(ordering: .acquiring) {
                    handleLostServer(current)
                    reportedFreewheeling = false
                    continue
                }
                let freewheeling = current.freewheeling.load(ordering: .relaxed)
                if freewheeling != reportedFreewheeling {
                    reportedFreewheeling = freewheeling
                    eventContinuation.yield(.freewheeling(freewheeling))
                    logger.notice(freewheeling
                        ? "JACK server '\(serverName)' freewheels: processing runs faster than real time; callback timings and xruns are not counted"
                        : "JACK server '\(serverName)' runs in real time again")
                }
                handleGraphChanges(current)
                // Connected: sleep until a callback or `stop()` wakes us (the timeout is only a
                // safety net, long so an idle SoundFit does not wake for it); without a
                // connection the loop below retries at its own pace. Under PipeWire, port
                // descriptions set before WirePlumber's metadata exists (SoundFit back before
                // it after a PipeWire restart) are refused: for the first minute they are
                // checked four times a second and set again.
                let watchingDescriptions = usesPipeWire && ContinuousClock.now - connectedAt < .seconds(60)
                if watchingDescriptions && !current.portDescriptionsPresent() && current.describePorts()
                    && current.portDescriptionsPresent() {
                    logger.notice("JACK metadata: port descriptions set again on server '\(serverName)'")
                }
                _ = supervisorWake.wait(timeout: .now() + (watchingDescriptions ? .milliseconds(250) : .seconds(10)))
                continue
            }
            if stopping.load(ordering: .acquiring) { return }
            if let server = privateServer, !server.isRunning {
                logger.warning("private JACK server '\(server.name)' is gone; restarting it")
                try? server.start()
            }
            do {
                try connect(isReconnection: true)
                connectedAt = .now
            } catch {
                if ContinuousClock.now - lastReport > .seconds(10) {
                    lastReport = .now
                    logger.warning("still waiting for JACK server '\(serverName)' (\(error)); retrying")
                }
                Thread.sleep(forTimeInterval: Double(configuration.reconnectInterval.components.seconds)
                    + Double(configuration.reconnectInterval.components.attoseconds) / 1e18)
            }
        }
    }

    /// Ports of other clients that went away or came back: logs the loss, restores the
    /// connections waiting for a returning port, and re-applies `--connect` to a returning
    /// physical port. Supervisor thread.
    private func handleGraphChanges(_ client: JackClientConnection) {
        for change in client.takeGraphChanges() {
            switch change {
            case .portWentAway(let port, let connections):
                let restored = connections.map { "\($0.0) -> \($0.1)" }.joined(separator: ", ")
                logger.notice("JACK port \(port) went away; SoundFit restores \(restored) when it returns")
            case .portAppeared(let port, let isPhysical):
                for (source, destination) in client.connectionsAwaiting(port) {
                    if client.connect(source, destination) {
                        logger.notice("JACK port \(port) is back; restored \(source) -> \(destination)")
                    } else {
                        logger.warning("JACK port \(port) is back, but \(source) -> \(destination) could not be restored")
                    }
                }
                if isPhysical && configuration.connectPhysicalPorts {
                    for (source, destination) in client.connectPhysicalPorts(involving: port) {
                        logger.notice("--connect: connected \(source) -> \(destination) (\(port) appeared)")
                    }
                }
            }
        }
    }

    private func handleLostServer(_ lost: JackClientConnection) {
        logger.error("""
            JACK server '\(serverName)' went away. SoundFit keeps running with its settings and \
            reconnects when the server returns.
            """)
        // Nobody else may reach the client while it closes: `status` reads its ports. Its
        // xruns move to the closed clients' count in the same step (the server is gone, so
        // no more come).
        let connections = lost.connectionsToRestore
        connection.withLock { current in
            current = nil
            lifetime.withLock {
                $0.xrunsOfClosedClients += lost.xruns.load(ordering: .relaxed)
                $0.rememberedConnections = connections
            }
        }
        lost.close()
        eventContinuation.yield(.disconnected(reason: "JACK server '\(serverName)' went away"))
    }

    /// Deactivates and closes the client, stops the supervisor and any private server.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        supervisorWake.signal()
        if supervisor != nil { supervisorDone.wait() }
        let last = connection.withLock { current -> JackClientConnection? in
            defer { current = nil }
            return current
        }
        if let last {
            last.close()
            logger.notice("JACK client '\(last.clientName)' closed")
        }
        if let server = privateServer {
            server.stop()
            logger.notice("private JACK server '\(server.name)' stopped")
        }
        eventContinuation.finish()
    }

    /// Whether the server runs in freewheel mode now (false without a connection). Any thread.
    public var isFreewheeling: Bool {
        connection.withLock { $0?.freewheeling.load(ordering: .relaxed) ?? false }
    }

    public var status: JackHostStatus {
        connection.withLock { client in
            let life = lifetime.withLock { $0 }
            guard let client else {
                return JackHostStatus(
                    isConnected: false, serverName: serverName, clientName: configuration.clientName,
                    sampleRate: 0, bufferSize: 0, xruns: life.xrunsOfClosedClients, isFreewheeling: false, freewheelCycles: 0,
                    reconnections: life.reconnections, usesPrivateServer: privateServer != nil,
                    callbackTimes: TimingSummary([]), captureLatency: 0...0, playbackLatency: 0...0,
                    inputPorts: [], outputPorts: [], portConnections: 0)
            }
            let latency = client.outputLatency
            return JackHostStatus(
                isConnected: true, serverName: serverName, clientName: client.clientName,
                sampleRate: Int(client.serverSampleRate.load(ordering: .relaxed)),
                bufferSize: Int(client.serverBufferSize.load(ordering: .relaxed)),
                xruns: life.xrunsOfClosedClients + client.xruns.load(ordering: .relaxed),
                isFreewheeling: client.freewheeling.load(ordering: .relaxed),
                freewheelCycles: client.freewheelCycles.load(ordering: .relaxed),
                reconnections: life.reconnections, usesPrivateServer: privateServer != nil,
                callbackTimes: TimingSummary(client.timings.recent()),
                captureLatency: latency.capture, playbackLatency: latency.playback,
                inputPorts: client.fullInputPortNames, outputPorts: client.fullOutputPortNames,
                portConnections: client.notedConnectionCount)
        }
    }
}
