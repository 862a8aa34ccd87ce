import ArgumentParser
import Foundation
import Logging
import SoundFitModel
import SoundFitEngine
import SoundFitHearing
import SoundFitJack
import SoundFitOSC
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState
import Synchronization

/// `soundfit run`: join a JACK graph and process audio, controlled over OSC, until SIGINT/SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Process audio inside a JACK graph, controlled over OSC (the default command).")

    @Option(help: "Audio inputs and outputs (1…64).")
    var channels = 2

    @Option(help: "JACK client name.")
    var name = "soundfit"

    @Option(help: "JACK server name (default: $JACK_DEFAULT_SERVER, else JACK's default).")
    var server: String?

    @Flag(help: "Connect to the physical capture and playback ports.")
    var connect = false

    @Flag(help: "Fail instead of starting a private dummy-backend JACK server when none is running.")
    var noStartServer = false

    @Option(help: "UDP port for OSC (0 picks a free port; the ready line says which).")
    var oscPort = 7700

    @Option(help: "Address to listen on for OSC. Anything but 127.0.0.1 lets other hosts control SoundFit.")
    var oscHost = "127.0.0.1"

    @Option(help: "Only accept OSC from these IPv4 addresses or prefixes, comma-separated (e.g. 127.0.0.1,192.168.1.0/24).")
    var oscAllow: String?

    @Option(help: "Directory of the factory patches (default: the patches/ folder of the SoundFit checkout or installation).")
    var patchesDir: String?

    @Option(help: "Directory for SoundFit's state (default: $XDG_STATE_HOME/soundfit or ~/.local/state/soundfit).")
    var stateDir: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: "Tech level 1…4 of the processing session (bands and processing of the personalization).")
    var techLevel = 3

    @Option(help: "Personalization mode: fine_tuning (default, up and down presets) or single_preset (default only); fine-tuning and single-preset are accepted too.")
    var personalization = PersonalizationMode.fineTuning

    @Option(help: "Hearing profile JSON file to start with (see `soundfit presets --help` for the format).")
    var profile: String?

    func validate() throws {
        guard (1...64).contains(channels) else {
            throw ValidationError("--channels must be between 1 and 64, got \(channels)")
        }
        guard (0...65535).contains(oscPort) else {
            throw ValidationError("--osc-port must be between 0 and 65535, got \(oscPort)")
        }
        guard !name.isEmpty, name.utf8.count <= 63, !name.contains(":") else {
            throw ValidationError("--name must be 1…63 characters without ':', got '\(name)'")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        if let oscAllow {
            do {
                _ = try OSCAllowList(parsing: oscAllow)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        guard Fitting.techLevels.contains(techLevel) else {
            throw ValidationError("--tech-level must be 1…4, got \(techLevel)")
        }
        if let server, server == name {
            throw ValidationError("--name '\(name)' equals --server: a JACK client named like its server deletes the server's socket")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "soundfit")
        do {
            try await runEngine(logger: logger)
        } catch let error as CLIError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        } catch let error as JackHostError {
            logger.critical("\(error.description)")
            throw ExitCode(2)
        }
    }

    private func runEngine(logger: Logger) async throws {
        let stateURL = try StateDirectory.prepare(stateDir ?? StateDirectory.defaultPath)
        // One SoundFit per state directory; held until the process ends.
        let stateLock = try StateDirectory.lock(stateURL)
        defer { withExtendedLifetime(stateLock) {} }
        logger.info("state directory \(stateURL.path)")

        let hearingProfile = try profile.map(HearingProfileFile.load)
        let fitting = try Fitting(techLevel: techLevel)
        let sessionConfiguration = personalization.configuration(fitting: fitting)

        // The last applied state comes back; the command line's session settings win.
        let store = DurableStateStore(directory: stateURL, descriptors: StateKeeper.writableDescriptors)
        let loaded = store.load(defaults: .defaults(descriptors: StateKeeper.writableDescriptors, session: sessionConfiguration))
        for warning in loaded.warnings { logger.warning("\(warning)") }
        var document = loaded.document
        document.session = sessionConfiguration
        let library = try PatchDirectory.library(explicit: patchesDir, stateDirectory: stateURL, logger: logger)

        let engine = AudioEngine(settings: StateKeeper.chainSettings(document), techLevel: techLevel)
        let runtime = SoundFitRuntime(engine: engine, sessionConfiguration: sessionConfiguration)
        var hostConfiguration = JackHostConfiguration()
        hostConfiguration.clientName = name
        hostConfiguration.serverName = server
        hostConfiguration.channelCount = channels
        hostConfiguration.connectPhysicalPorts = connect
        hostConfiguration.startsPrivateServer = !noStartServer
        hostConfiguration.privateServerLogPath = stateURL.appendingPathComponent("jackd-private.log").path
        let host = JackEngineHost(configuration: hostConfiguration, engine: engine, logger: logger)

        let socket: OSCSocket
        do {
            socket = try OSCSocket(host: oscHost, port: UInt16(oscPort))
        } catch {
            throw CLIError(error.description)
        }
        if oscHost != "127.0.0.1" && oscHost != "localhost" {
            logger.warning("OSC listens on \(oscHost): other hosts on that network can control SoundFit\(oscAllow == nil ? " (restrict them with --osc-allow)" : "")")
        }
        // The processing session follows the JACK server connection. The ready line waits until
        // the first connection was handled, so a script finds the session active.
        let (firstConnection, firstConnectionHandled) = AsyncStream<Void>.makeStream()
        let lifecycle = Task {
            var profilePending = hearingProfile
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
        }
        // State is restored before the first connection; an explicit --profile then replaces the
        // restored profile and its session values (the recommendation for a new profile follows).
        if hearingProfile != nil {
            document.hearingProfile = nil
            for address in document.parameters.keys where ParameterModel.entry(at: address)?.binding?.isSession == true {
                document.parameters[address] = nil
            }
        }
        let surfaceBox = SurfaceBox()
        let keeper = StateKeeper(runtime: runtime, library: library, store: store, restoring: document) { current in
            surfaceBox.surface?.currentPatchChanged(current)
        }
        try host.start()
        let allowList = try oscAllow.map { try OSCAllowList(parsing: $0) } ?? .everyone
        let surface = OSCControlSurface(runtime: runtime, socket: socket, logger: logger, allowList: allowList) {
            let status = host.status
            return SurfaceStatus(fields: [
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
        surfaceBox.surface = surface
        surface.attach(keeper)
        // Document-level settings (the seed's fullStateForDocument) are kept apart from the state.
        let documentSettings = DocumentSettings(
            calibration: runtime.presets.calibration, channelCount: channels,
            osc: .init(host: oscHost, port: Int(socket.boundPeer.port),
                       allow: oscAllow.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []))
        do {
            try AtomicFile.write(documentSettings.encoded(), to: stateURL.appendingPathComponent("document.json"))
        } catch {
            logger.warning("document settings not saved: \(error)")
        }
        surface.start()
        let storeEvents = store.events
        Task {
            for await event in storeEvents {
                if case .failed(let message) = event { logger.error("state not saved: \(message)") }
            }
        }
        for await _ in firstConnection { break }
        let status = host.status
        logger.notice("OSC listening on udp://\(socket.boundPeer)")
        // One machine-readable line on stdout for scripts and tests.
        print("soundfit ready osc=udp://\(socket.boundPeer) client=\(status.clientName) server=\(status.serverName) channels=\(channels)")
        fflush(nil)

        let signal = await ShutdownSignal.wait()
        logger.notice("received \(signal); shutting down")
        socket.close()
        host.stop()
        await lifecycle.value
        do {
            try await store.flush()
        } catch {
            logger.error("the last state could not be saved: \(error)")
        }
    }
}

/// Lets the state keeper reach the surface created after it.
private final class SurfaceBox: Sendable {
    private let storage = Mutex<OSCControlSurface?>(nil)
    var surface: OSCControlSurface? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
