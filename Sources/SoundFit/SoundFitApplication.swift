import Foundation
import Logging
import ServiceLifecycle
import SoundFitDSP
import SoundFitEngine
import SoundFitJack
import SoundFitOSC
import SoundFitRuntime
import SoundFitState

/// SoundFit assembled from a configuration: the audio engine, the control plane, the JACK host,
/// the OSC surface and, with persistence, durable state and patches. The one place they are
/// wired together, for `soundfit run` and the tests alike.
///
/// A `Service`: run it in a `ServiceGroup`. `run()` connects to JACK, answers OSC, reports
/// ready once the first connection was handled, and on graceful shutdown (or cancellation)
/// closes the socket and the JACK client and writes the last state. Every long-lived task the
/// wiring needs (the session following the connection, the state keeper, current-patch
/// changes to the surface, failed state writes to the log) is a child of `run()` and ends
/// with it.
///
/// Thread rules: create and run it from any thread except the audio thread.
public final class SoundFitApplication: Service, Sendable {
    public let configuration: SoundFitConfiguration
    public let engine: AudioEngine
    public let runtime: SoundFitRuntime
    public let host: JackEngineHost
    public let socket: OSCSocket
    public let surface: OSCControlSurface
    /// Patches and durable state; `nil` without persistence.
    public let stateKeeper: StateKeeper?
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
            let loaded = durable.load(defaults: .defaults(descriptors: descriptors, session: configuration.session))
            for warning in loaded.warnings { logger.warning("\(warning)") }
            var document = loaded.document
            document.session = configuration.session
            restored = document
            store = durable
        }
        self.store = store

        engine = AudioEngine(settings: restored.map(StateKeeper.chainSettings) ?? ChainSettings(),
                             techLevel: configuration.session.fitting.techLevel)
        runtime = SoundFitRuntime(engine: engine, sessionConfiguration: configuration.session)
        runtime.maximumOutputSPL = configuration.maximumOutputSPL
        var jack = configuration.jack
        if let persistence = configuration.persistence, jack.privateServerLogPath == nil {
            jack.privateServerLogPath = persistence.stateDirectory.appendingPathComponent("jackd-private.log").path
        }
        host = JackEngineHost(configuration: jack, engine: engine, logger: logger)
        socket = try OSCSocket(host: configuration.osc.host, port: configuration.osc.port)

        // State is restored before the first connection; a configured hearing profile then
        // replaces the restored profile and its session values.
        let (currentPatchChanges, currentPatchContinuation) = AsyncStream<CurrentPatch?>.makeStream()
        self.currentPatchChanges = currentPatchChanges
        if let persistence = configuration.persistence, let store, var document = restored {
            if configuration.hearingProfile != nil {
                document.hearingProfile = nil
                for address in document.parameters.keys where ParameterModel.entry(at: address)?.binding?.isSession == true {
                    document.parameters[address] = nil
                }
            }
            stateKeeper = StateKeeper(runtime: runtime, library: persistence.patches, store: store, restoring: document) {
                currentPatchContinuation.yield($0)
            }
        } else {
            stateKeeper = nil
            currentPatchContinuation.finish()
        }
        let host = self.host
        let hearingTest = HearingTestRunner(runtime: runtime, stateDirectory: configuration.persistence?.stateDirectory,
                                            settings: HearingTestSettings(earphone: configuration.earphone))
        surface = OSCControlSurface(runtime: runtime, socket: socket, logger: logger, allowList: configuration.osc.allowList,
                                    hearingTest: hearingTest) {
            SurfaceStatus(host.status)
        }
        if let stateKeeper { surface.attach(stateKeeper) }
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
            try await withThrowingDiscardingTaskGroup { session in
                let (firstConnection, firstConnectionHandled) = AsyncStream<Void>.makeStream()
                session.addTask { await self.followConnection(announcingFirstTo: firstConnectionHandled) }
                do {
                    try host.start()
                } catch {
                    socket.close(receiving: false)
                    host.stop()
                    throw error
                }
                writeDocumentSettings()
                // Answers OSC and feeds subscribers until the loops are cancelled at the end.
                loops.addTask { await self.surface.run() }
                for await _ in firstConnection { break }
                logger.notice("OSC listening on udp://\(socket.boundPeer)")
                let status = host.status
                onReady(SoundFitReady(osc: socket.boundPeer, clientName: status.clientName, serverName: status.serverName,
                                      channelCount: host.configuration.channelCount))

                // Returns on graceful shutdown, throws when cancelled: either way, stop in order.
                // Stopping the host ends `followConnection` once the session was deactivated.
                try? await gracefulShutdown()
                logger.notice("shutting down")
                socket.close()
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
            case .connected:
                do {
                    try await runtime.audioSystemConnected()
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

    /// Logs every failed state write. Ends when cancelled.
    private func logStateStoreEvents() async {
        guard let store else { return }
        for await event in store.events {
            if case .failed(let message) = event { logger.error("state not saved: \(message)") }
        }
    }

    /// Document-level settings (calibration, channels, OSC) are kept apart from the state.
    private func writeDocumentSettings() {
        guard let persistence = configuration.persistence else { return }
        let settings = DocumentSettings(
            calibration: runtime.presets.calibration, channelCount: host.configuration.channelCount,
            osc: .init(host: configuration.osc.host, port: Int(socket.boundPeer.port), allow: configuration.osc.allowEntries))
        do {
            try AtomicFile.write(settings.encoded(), to: persistence.stateDirectory.appendingPathComponent("document.json"))
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
            ("callback_load", .float(Float(status.callbackLoad))),
            ("callback_p50_us", .float(Float(status.callbackTimes.p50 / 1000))),
            ("callback_p99_us", .float(Float(status.callbackTimes.p99 / 1000))),
            ("callback_p999_us", .float(Float(status.callbackTimes.p999 / 1000))),
            ("callback_max_us", .float(Float(status.callbackTimes.maximum / 1000))),
            ("callback_samples", .int32(Int32(status.callbackTimes.count))),
            ("reconnections", .int32(Int32(status.reconnections))),
            ("capture_latency", .int32(Int32(status.captureLatency.upperBound))),
            ("playback_latency", .int32(Int32(status.playbackLatency.upperBound))),
        ])
    }
}
