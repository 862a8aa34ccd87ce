import Foundation
import Logging
import OSCCore
import ServiceLifecycle
import SoundFitDSP
import SoundFitEngine
import SoundFitJack
import SoundFitOSC
import SoundFitRuntime
import SoundFitState
import SoundFitWeb

/// SoundFit assembled from a configuration: the audio engine, the control plane, the JACK host,
/// the OSC surface and, with persistence, durable state and patches. The one place they are
/// wired together, for `soundfit run` and the tests alike.
///
/// A `Service`: run it in a `ServiceGroup`. `run()` connects to JACK, answers OSC, reports
/// ready once the first connection was handled, and on graceful shutdown (or cancellation)
/// closes the OSC socket, the TCP listener and the JACK client and writes the last state.
/// Every long-lived task the wiring needs (the session following the connection, the state
/// keeper, current-patch changes to the surface, failed state writes to the log) is a child of
/// `run()` and ends with it.
///
/// Thread rules: create and run it from any thread except the audio thread.
public final class SoundFitApplication: Service, Sendable {
    public let configuration: SoundFitConfiguration
    public let engine: AudioEngine
    public let runtime: SoundFitRuntime
    public let host: JackEngineHost
    public let socket: OSCSocket
    /// OSC over TCP on the socket's port number; nil when turned off.
    public let tcpListener: OSCTCPListener?
    public let surface: OSCControlSurface
    /// The HTTP and WebSocket port (OSCQuery, the web page, OSC over WebSocket); nil when off.
    public let web: WebServer?
    /// The hearing test the surface drives; cancelled when the server starts freewheeling.
    private let hearingTest: HearingTestRunner
    /// Patches and durable state; `nil` without persistence.
    public let stateKeeper: StateKeeper?
    /// MIDI control: the JACK MIDI input's mappings, learn and program changes.
    public let midiControl: MIDIControl
    private let store: DurableStateStore?
    private let logger: Logger
    private let onReady: @Sendable (SoundFitReady) -> Void
    /// Current-patch changes of the state keeper, forwarded to the surface by `run()`.
    private let currentPatchChanges: AsyncStream<CurrentPatch?>

    /// Builds SoundFit without starting anything: restores the saved state (with persistence),
    /// creates the engine with it and opens the OSC socket. `onReady` hears once when SoundFit
    /// is connected, its session handled and OSC answered.
    public init(configuration: SoundFitConfiguration, logger: Logger,
                onReady: @escaping @Sendable (SoundFitReady) -> Void = { _ in }) throws(OSCSocket.OpenError) {
        self.configuration = configuration
        self.logger = logger
        self.onReady = onReady

        // The last applied state comes back; the configured session settings win.
        var restored: StateDocument?
        var store: DurableStateStore?
        if let persistence = configuration.persistence {
            let descriptors = StateKeeper.writableDescriptors
            let durable = DurableStateStore(directory: persistence.stateDirectory, descriptors: descriptors)
            // A first start runs at the first factory patch ("Transparent": the defaults), as an
            // AUv3 audio unit's current preset starts at a factory preset.
            var defaults = StateDocument.defaults(descriptors: descriptors, session: configuration.session)
            defaults.currentPatch = persistence.patches.factoryPatches.first.map { CurrentPatch(number: $0.number, name: $0.name) }
            let loaded = durable.load(defaults: defaults)
            for warning in loaded.warnings { logger.warning("\(warning)") }
            var document = loaded.document
            document.session = configuration.session
            restored = document
            store = durable
        }
        self.store = store

        engine = AudioEngine(settings: restored.map(StateKeeper.chainSettings) ?? ChainSettings(),
                             techLevel: configuration.session.techLevel.value)
        runtime = SoundFitRuntime(engine: engine, sessionConfiguration: configuration.session,
                                  presets: ProfilePresetSource(calibration: configuration.calibration),
                                  ceiling: configuration.outputCeiling)
        runtime.maximumOutputSPL = configuration.maximumOutputSPL
        logger.info("output ceiling \(configuration.outputCeiling)")
        var jack = configuration.jack
        if let persistence = configuration.persistence, jack.privateServerLogPath == nil {
            jack.privateServerLogPath = persistence.stateDirectory.appendingPathComponent("jackd-private.log").path
        }
        let midiInput = MIDIControlInput()
        host = JackEngineHost(configuration: jack, engine: engine, midi: configuration.midiInput ? midiInput : nil,
                              logger: logger)
        (socket, tcpListener) = try Self.openOSC(configuration.osc, logger: logger)

        // State is restored before the first connection; a configured hearing profile then
        // replaces the restored profile and its session values.
        let (currentPatchChanges, currentPatchContinuation) = AsyncStream<CurrentPatch?>.makeStream()
        self.currentPatchChanges = currentPatchChanges
        if let persistence = configuration.persistence, let store, var document = restored {
            if configuration.hearingProfile != nil { document.forgetHearingProfile() }
            let documentSettings = DocumentSettings(
                calibration: configuration.calibration, channelCount: configuration.jack.channelCount,
                osc: .init(host: configuration.osc.host, port: Int(configuration.osc.port), allow: configuration.osc.allowEntries))
            stateKeeper = StateKeeper(runtime: runtime, library: persistence.patches, store: store, restoring: document,
                                      documentSettings: documentSettings) {
                currentPatchContinuation.yield($0)
            }
        } else {
            stateKeeper = nil
            currentPatchContinuation.finish()
        }
        let host = self.host, socket = self.socket, tcpListener = self.tcpListener, durable = store
        let calibrator = Calibrator(runtime: runtime, stateDirectory: configuration.persistence?.stateDirectory)
        let earphone = Self.restoreCalibration(calibrator, configuration: configuration, logger: logger)
        let hearingTest = HearingTestRunner(runtime: runtime, stateDirectory: configuration.persistence?.stateDirectory,
                                            settings: HearingTestSettings(earphone: earphone)) {
            calibrator.busyReason ?? (host.isFreewheeling ? "the JACK server is freewheeling (faster than real time)" : nil)
        }
        if let webConfiguration = configuration.web {
            do {
                web = try WebServer(
                    host: configuration.osc.host, port: webConfiguration.port, runtime: runtime, stateKeeper: stateKeeper,
                    routes: Self.webRoutes(configuration: configuration, runtime: runtime, hearingTest: hearingTest, stateKeeper: stateKeeper),
                    hostInfo: { webPort in
                        OSCQueryHostInfo(name: "SoundFit \(host.status.clientName)", oscHost: socket.boundPeer.host,
                                         oscPort: socket.boundPeer.port, webSocketPort: webPort,
                                         servesPage: webConfiguration.pageDirectory != nil)
                    },
                    allowList: configuration.osc.allowList,
                    access: Self.webAccess(configuration.osc, webConfiguration, clientName: configuration.jack.clientName),
                    limits: webConfiguration.limits, logger: logger)
            } catch {
                socket.close(receiving: false)
                tcpListener?.close()
                throw OSCSocket.OpenError(description: "\(error)")
            }
        } else {
            web = nil
        }
        let web = self.web
        self.hearingTest = hearingTest
        let streams: [any OSCTransport] = (tcpListener.map { [$0] } ?? []) + (web.map { [$0.transport] } ?? [])
        surface = OSCControlSurface(runtime: runtime, transport: socket, streams: streams, logger: logger,
                                    allowList: configuration.osc.allowList, exposure: configuration.osc.exposure,
                                    subscriptionLease: configuration.osc.subscriptionLease, hearingTest: hearingTest,
                                    calibrator: calibrator) {
            var status = SurfaceStatus(host.status)
            status.fields += [
                ("osc_udp", .string("udp://\(socket.boundPeer)")),
                ("osc_tcp", .string(tcpListener.map { "tcp://\($0.boundPeer)" } ?? "off")),
                ("osc_tcp_connections", .int32(Int32(tcpListener?.connectionCount ?? 0))),
                ("http", .string(web.map { "http://\($0.boundPeer)" } ?? "off")),
                ("http_connections", .int32(Int32(web?.connectionCount ?? 0))),
            ]
            // With a state directory: 1 while every applied change is persisted, 0 while the
            // state cannot be written (full disk, read-only, I/O error).
            if let durable { status.fields.append(("persisted", .int32(durable.persistenceProblem == nil ? 1 : 0))) }
            return status
        }
        if let stateKeeper { surface.attach(stateKeeper) }
        web?.attach(surface, channelCount: configuration.jack.channelCount)
        midiControl = MIDIControl(runtime: runtime, input: midiInput, keeper: stateKeeper,
                                  port: configuration.midiInput ? "midi_in" : nil)
        surface.attach(midiControl)
    }

    /// The UDP socket and, unless turned off, the TCP listener on the same port number. With
    /// port 0 the socket picks a free port; when TCP cannot have that number too, another is
    /// tried (a few times).
    private static func openOSC(_ osc: SoundFitConfiguration.OSC,
                                logger: Logger) throws(OSCSocket.OpenError) -> (OSCSocket, OSCTCPListener?) {
        var attempts = 0
        while true {
            let socket = try OSCSocket(host: osc.host, port: osc.port)
            guard osc.tcp else { return (socket, nil) }
            do {
                let tcp = try OSCTCPListener(host: osc.host, port: socket.boundPeer.port, allowList: osc.allowList, logger: logger)
                return (socket, tcp)
            } catch {
                socket.close(receiving: false)
                attempts += 1
                guard osc.port == 0, attempts < 8 else {
                    throw OSCSocket.OpenError(description: "\(error.description) (--no-osc-tcp turns OSC over TCP off)")
                }
            }
        }
    }

    /// Runs SoundFit until a graceful shutdown or cancellation, then stops it in order: OSC,
    /// JACK, the session, and a last write of the state. Throws `JackHostError` when JACK
    /// cannot be joined.
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { loops in
            loops.addTask { await self.runtime.run() }
            if let stateKeeper {
                loops.addTask { await stateKeeper.run() }
            }
            loops.addTask { await self.forwardCurrentPatchChanges() }
            loops.addTask { await self.logStateStoreEvents() }
            loops.addTask { await self.midiControl.run() }
            loops.addTask { await self.forwardMIDIReports() }
            try await withThrowingDiscardingTaskGroup { session in
                let (firstConnection, firstConnectionHandled) = AsyncStream<Void>.makeStream()
                session.addTask { await self.followConnection(announcingFirstTo: firstConnectionHandled) }
                do {
                    try host.start()
                } catch {
                    socket.close(receiving: false)
                    tcpListener?.close()
                    web?.close()
                    host.stop()
                    throw error
                }
                writeDocumentSettings()
                // Answers OSC and feeds subscribers until the loops are cancelled at the end.
                loops.addTask { await self.surface.run() }
                if let web { loops.addTask { await web.run() } }
                for await _ in firstConnection { break }
                logger.notice("OSC listening on udp://\(socket.boundPeer)\(tcpListener.map { " and tcp://\($0.boundPeer)" } ?? "")")
                if let web { logger.notice("HTTP (OSCQuery, WebSocket\(configuration.web?.pageDirectory == nil ? "" : ", the page at /ui")) on http://\(web.boundPeer)") }
                let status = host.status
                let zeroconf = web.map { web in
                    ZeroconfAdvertiser(name: "SoundFit \(status.clientName)", clientName: configuration.jack.clientName,
                                       address: socket.boundPeer.host, services: [
                        .init(type: "_oscjson._tcp", port: web.boundPeer.port),
                        .init(type: "_osc._udp", port: socket.boundPeer.port),
                    ], logger: logger)
                }
                zeroconf?.start()
                var ready = SoundFitReady(osc: socket.boundPeer, oscTCP: tcpListener?.boundPeer, http: web?.boundPeer, clientName: status.clientName,
                                          serverName: status.serverName, channelCount: host.configuration.channelCount,
                                          usesPrivateServer: status.usesPrivateServer)
                ready.httpToken = web?.access.token
                onReady(ready)

                // Returns on graceful shutdown, throws when cancelled: either way, stop in order.
                // Stopping the host ends `followConnection` once the session was deactivated.
                try? await gracefulShutdown()
                logger.notice("shutting down")
                zeroconf?.stop()
                socket.close()
                tcpListener?.close()
                web?.close()
                host.stop()
            }
            if let store {
                do {
                    try await store.flush()
                } catch {
                    logger.error("the last state could not be saved: \(error)")
                }
            }
            loops.cancelAll()
        }
    }

    /// The processing session follows the JACK connection; the configured hearing profile is
    /// submitted once the first session is active. Ends when the host stops.
    private func followConnection(announcingFirstTo firstConnectionHandled: AsyncStream<Void>.Continuation) async {
        var profilePending = configuration.hearingProfile
        for await event in host.events {
            switch event {
            case .connected(_, let sampleRate, _):
                do {
                    try await runtime.audioSystemConnected(sampleRate: sampleRate)
                    if let profile = profilePending, runtime.controller.session != nil {
                        profilePending = nil
                        let variants = try await runtime.submitProfile(profile)
                        logger.notice("hearing profile applied; presets available: \(variants.map(\.rawValue).joined(separator: ", "))")
                    }
                } catch {
                    logger.error("processing session: \(error)")
                }
                firstConnectionHandled.yield()
                firstConnectionHandled.finish()
            case .disconnected:
                await runtime.audioSystemDisconnected()
            case .freewheeling(let freewheeling):
                // Tones would play faster than real time to nobody: a running test ends.
                if freewheeling, hearingTest.state.isActive, (try? hearingTest.cancel()) != nil {
                    logger.warning("hearing test cancelled: the JACK server started freewheeling")
                }
            }
        }
        firstConnectionHandled.finish()
    }

    /// Tells subscribers about every change of the current patch. Ends when cancelled.
    private func forwardCurrentPatchChanges() async {
        for await current in currentPatchChanges {
            surface.currentPatchChanged(current)
        }
    }

    /// Logs what MIDI control did on its own and tells subscribers about refusals. Ends when cancelled.
    ///
    /// Whoever plays into the MIDI input decides how many reports there are (a controller
    /// sending program changes to missing patches made 22 779 lines in 15 s), so each kind of
    /// line goes through a rate limit; the counts of held-back lines are written every 10 s.
    private func forwardMIDIReports() async {
        let lines = RateLimitedLog<String> { [logger] line in logger.warning("\(line)") }
        let loads = RateLimitedLog<String> { [logger] line in logger.info("\(line)") }
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: .seconds(10))) != nil {
                    lines.flushSuppressed()
                    loads.flushSuppressed()
                }
            }
            for await report in midiControl.reports {
                switch report {
                case .programLoaded(let channel, let program, let name):
                    loads.log("MIDI program change", "MIDI program change \(program) on channel \(channel): loaded factory patch '\(name)'")
                case .refused(let address, let reason):
                    lines.log("MIDI \(address)", "MIDI \(address): \(reason)")
                case .dropped(let count):
                    lines.log("MIDI dropped", "MIDI: \(count) events dropped (more than the ring holds between two drains)")
                }
                surface.midiReported(report)
            }
            group.cancelAll()
        }
    }

    /// Logs every failed state write. Ends when cancelled.
    private func logStateStoreEvents() async {
        guard let store else { return }
        for await event in store.events {
            if case .failed(let message) = event { logger.error("state not saved: \(message)") }
        }
    }

    /// Document-level settings (calibration, channels, OSC; the configured OSC port, so 0 stays
    /// "pick a free port") are kept apart from the state, in `document.json`.
    private func writeDocumentSettings() {
        do {
            try stateKeeper?.saveDocumentSettings()
        } catch {
            logger.warning("document settings not saved: \(error)")
        }
    }
}

extension SurfaceStatus {
    /// What `/status` reports about the JACK host.
    init(_ status: JackHostStatus) {
        self.init(fields: [
            ("connected", .int32(status.isConnected ? 1 : 0)),
            ("server", .string(status.serverName)),
            ("client", .string(status.clientName)),
            ("sample_rate", .int32(Int32(status.sampleRate))),
            ("buffer_size", .int32(Int32(status.bufferSize))),
            ("xruns", .int64(Int64(status.xruns))),
            ("freewheeling", .int32(status.isFreewheeling ? 1 : 0)),
            ("freewheel_cycles", .int64(Int64(status.freewheelCycles))),
            ("callback_load", .float(Float(status.callbackLoad))),
            ("callback_p50_us", .float(Float(status.callbackTimes.p50 / 1000))),
            ("callback_p99_us", .float(Float(status.callbackTimes.p99 / 1000))),
            ("callback_p999_us", .float(Float(status.callbackTimes.p999 / 1000))),
            ("callback_max_us", .float(Float(status.callbackTimes.maximum / 1000))),
            ("callback_samples", .int32(Int32(status.callbackTimes.count))),
            ("reconnections", .int32(Int32(status.reconnections))),
            ("port_connections", .int32(Int32(clamping: status.portConnections))),
            ("capture_latency", .int32(Int32(status.captureLatency.upperBound))),
            ("playback_latency", .int32(Int32(status.playbackLatency.upperBound))),
        ])
    }
}
