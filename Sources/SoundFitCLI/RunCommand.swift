import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SoundFit

/// `soundfit run`: join a JACK graph and process audio, controlled over OSC, until SIGINT/SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Process audio inside a JACK graph, controlled over OSC (the default command).")

    @Option(help: "Audio inputs and outputs (1…64; default: document.json's, else 2).")
    var channels: Int?

    @Option(help: "JACK client name.")
    var name = "soundfit"

    @Option(help: "JACK server name (default: $JACK_DEFAULT_SERVER, else JACK's default).")
    var server: String?

    @Flag(help: "Connect to the physical capture and playback ports.")
    var connect = false

    @Flag(help: "Fail instead of starting a private dummy-backend JACK server when none is running.")
    var noStartServer = false

    @Option(help: "UDP and TCP port for OSC (0 picks a free port; the ready line says which; default: document.json's, else 7700).")
    var oscPort: Int?

    @Flag(help: "Serve OSC over UDP only: no OSC over TCP (SLIP or length-prefixed) on the same port number.")
    var noOscTcp = false

    @Flag(help: "Register no MIDI control input port (midi_in); MIDI mappings stay in the state, /midi/learn is refused.")
    var noMidi = false

    @Option(help: ArgumentHelp(
        "TCP port for HTTP and WebSocket: the OSCQuery namespace, the web page at /ui and OSC over WebSocket, on the OSC host and --osc-allow (default: the OSC port + 1, and 0 when the OSC port is 0; 0 picks a free port; the ready line says which).",
        discussion: "Limits: 32 connections (one more gets 503), request head 8 KiB (431), body 64 KiB (413), a whole request within 10 s (408), WebSocket messages 16 KiB (close 1009), 256 KiB queued for a client that does not read (then it is closed), a silent WebSocket is pinged after 30 s and closed after 60 s."))
    var httpPort: Int?

    @Flag(help: "Serve no HTTP and WebSocket port (no OSCQuery, no web page).")
    var noHttp = false

    @Option(help: "A host name the HTTP port answers besides loopback names and the listening address (repeatable or comma-separated; a guard against DNS rebinding: other Host headers get 403).")
    var httpAllowHost: [String] = []

    @Option(help: "An origin (http://host:port) whose pages may open a WebSocket or send state-changing requests, besides the page's own (repeatable or comma-separated).")
    var httpAllowOrigin: [String] = []

    @Option(help: "Token required on WebSocket upgrades and state-changing HTTP requests (?token= or Authorization: Bearer); default: a random one when --osc-host is not loopback, else none. The ready line's http= URL carries it.")
    var httpToken: String?

    @Option(help: "Directory of the web page served at /ui (default: $SOUNDFIT_UI, else the ui/ folder of the SoundFit checkout or installation).")
    var uiDir: String?

    /// The HTTP port when `--http-port` is not given: the one above the OSC port, so that
    /// instances told apart by `--osc-port` (two apart: OSC also takes TCP on its number) never
    /// meet on HTTP; 0 (a free one) when the OSC port is 0; nil above 65534.
    static func httpPort(followingOSCPort oscPort: Int) -> Int? {
        oscPort == 0 ? 0 : oscPort < 65535 ? oscPort + 1 : nil
    }

    /// `--http-allow-host`, each occurrence split at commas.
    var httpAllowHostList: [String] { Self.commaList(httpAllowHost) }
    /// `--http-allow-origin`, each occurrence split at commas.
    var httpAllowOriginList: [String] { Self.commaList(httpAllowOrigin) }

    private static func commaList(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The web page's folder: `--ui-dir`, else `$SOUNDFIT_UI`, else the checkout's or installation's `ui/`.
    var webPageDirectory: URL? {
        ResourceDirectory.resolve(explicit: uiDir, environmentVariable: "SOUNDFIT_UI", folder: "ui")
    }

    @Option(help: "Address to listen on for OSC. Anything but 127.0.0.1 lets other hosts control SoundFit (default: document.json's, else 127.0.0.1).")
    var oscHost: String?

    @Option(help: "Only accept OSC from these IPv4 addresses or prefixes, comma-separated (e.g. 127.0.0.1,192.168.1.0/24; default: document.json's, else everyone).")
    var oscAllow: String?

    @Option(help: "Seconds a /subscribe lasts unless the subscriber renews it by subscribing again (1…3600).")
    var subscriptionLease = Int(SubscriberRegistry.defaultLease.components.seconds)

    @OptionGroup var levels: ChainLevelOptions

    @OptionGroup var patchLimits: UserPatchLimitOptions

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

    @Option(help: "Earphone RETSPL table for the hearing test: a known name (TDH-39, DD45, DD65v2, HDA200, HD300, ER-3A, ER-3A-HA2) or a JSON file {\"name\": …, \"retspl\": [{\"hz\": 1000, \"db_spl\": 7}, …]} (default: the one kept with the calibration, else TDH-39).")
    var earphone: String?


    @Option(help: "With $NSM_URL set (SoundFit started by an NSM session manager): seconds to wait for the manager's /nsm/client/open before failing (1…300). The session's path replaces --state-dir, its client id --name.")
    var nsmOpenTimeout = 10

    func validate() throws {
        if let channels, !DocumentSettings.channelRange.contains(channels) {
            throw ValidationError("--channels must be between 1 and 64, got \(channels)")
        }
        if let oscPort, !(0...65535).contains(oscPort) {
            throw ValidationError("--osc-port must be between 0 and 65535, got \(oscPort)")
        }
        if let httpPort, !(0...65535).contains(httpPort) {
            throw ValidationError("--http-port must be between 0 and 65535, got \(httpPort)")
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
        guard (1...3600).contains(subscriptionLease) else {
            throw ValidationError("--subscription-lease must be 1…3600 seconds, got \(subscriptionLease)")
        }
        guard TechLevel.range.contains(techLevel) else {
            throw ValidationError("--tech-level must be 1…4, got \(techLevel)")
        }
        if let server, server == name {
            throw ValidationError("--name '\(name)' equals --server: a JACK client named like its server deletes the server's socket")
        }
        if let httpToken, httpToken.isEmpty || !httpToken.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) }) {
            throw ValidationError("--http-token must be letters, digits and -._~ (it goes into URLs), got '\(httpToken)'")
        }
        for host in httpAllowHostList where WebAccess.hostName(ofHost: host) == nil {
            throw ValidationError("--http-allow-host takes host names or addresses (example.local, 192.168.1.5), got '\(host)'")
        }
        for origin in httpAllowOriginList where WebAccess.normalizedOrigin(origin) == nil {
            throw ValidationError("--http-allow-origin takes origins, scheme://host[:port] (http://example.local:8080), got '\(origin)'")
        }
        guard (1...300).contains(nsmOpenTimeout) else {
            throw ValidationError("--nsm-open-timeout must be 1…300 seconds, got \(nsmOpenTimeout)")
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
            if let url = ProcessInfo.processInfo.environment[NSMClient.environmentVariable], !url.isEmpty {
                try await runInSession(url: url, logger: logger)
                return
            }
            let application = try makeApplication(logger: logger)
            try await Self.serve(application, logger: logger)
        } catch let error as CLIError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        } catch let error as OSCSocket.OpenError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        } catch let error as JackHostError {
            logger.critical("\(error.description)")
            throw ExitCode(2)
        }
    }

    /// Runs SoundFit until SIGTERM or SIGINT (a graceful shutdown), then returns.
    static func serve(_ application: SoundFitApplication, logger: Logger) async throws {
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await services.run()
    }

    /// SoundFit configured from the command line; prints the ready line when it is ready.
    /// `session`: an NSM session's state directory (checked, perhaps already locked) and JACK
    /// client name, which replace `--state-dir` and `--name`. `onReady` runs after the ready line.
    func makeApplication(logger: Logger, session: NSMPreparedOpen? = nil,
                         onReady: @escaping @Sendable () -> Void = {}) throws -> SoundFitApplication {
        let name = session?.open.clientID ?? name
        let stateURL = try session?.directory ?? StateDirectory.prepare(stateDir ?? StateDirectory.defaultPath)
        // One SoundFit per state directory: the lock is held as long as the process lives.
        let stateLock = try session?.lock ?? StateDirectory.lock(stateURL)
        logger.info("state directory \(stateURL.path)")
        // Which build of the personalization loops runs (SOUNDFIT_SIMD forces one; see docs/hearing.md).
        if let problem = SIMDPath.environmentProblem { logger.warning("\(problem)") }
        logger.info("DSP loops: \(SIMDPath.preferred.rawValue) (AVX2+FMA \(SIMDPath.isAVX2FMAAvailable ? "available" : "not available"))")
        // Document-level settings: the flags given, else document.json's, else the defaults.
        let document = DocumentSettingsFile.load(stateURL, logger: logger)
        let channels = channels ?? document.channelCount
        let oscHost = oscHost ?? document.osc.host
        let oscPort = oscPort ?? document.osc.port
        let oscAllowEntries = oscAllow.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            ?? document.osc.allow

        let hearingProfile = try profile.map(HearingProfileFile.load)
        let session = personalization.configuration(techLevel: try TechLevel(techLevel))
        let patches = try PatchDirectory.library(explicit: levels.patchesDir, stateDirectory: stateURL, logger: logger,
                                                 limits: patchLimits.limits)

        var jack = JackHostConfiguration()
        jack.clientName = name
        jack.serverName = server
        jack.channelCount = channels
        jack.connectPhysicalPorts = connect
        jack.startsPrivateServer = !noStartServer
        let allowList: OSCAllowList
        do {
            allowList = oscAllowEntries.isEmpty ? .everyone : try OSCAllowList(parsing: oscAllowEntries.joined(separator: ","))
        } catch {
            throw CLIError("\(DocumentSettings.fileName): osc.allow: \(error)")
        }
        let osc = SoundFitConfiguration.OSC(host: oscHost, port: UInt16(oscPort), tcp: !noOscTcp, allowList: allowList,
                                            allowEntries: oscAllowEntries, subscriptionLease: .seconds(subscriptionLease))
        var configuration = SoundFitConfiguration(
            jack: jack, osc: osc, session: session, hearingProfile: hearingProfile,
            persistence: .init(stateDirectory: stateURL, patches: patches, lock: stateLock))
        configuration.maximumOutputSPL = levels.maxOutput
        configuration.midiInput = !noMidi
        if !noHttp {
            let page = webPageDirectory
            if let uiDir, page.map({ !FileManager.default.fileExists(atPath: $0.path) }) ?? true {
                throw CLIError("--ui-dir \(uiDir) does not exist")
            }
            if page == nil { logger.warning("no web page found (pass --ui-dir); /ui is not served") }
            guard let port = httpPort ?? Self.httpPort(followingOSCPort: oscPort) else {
                throw CLIError("the OSC port \(oscPort) leaves no port above it for HTTP: give --http-port (or --no-http)")
            }
            var web = SoundFitConfiguration.Web(port: UInt16(port), pageDirectory: page)
            web.allowedHosts = httpAllowHostList
            web.allowedOrigins = httpAllowOriginList
            web.token = httpToken
            configuration.web = web
        }
        configuration.calibration = levels.calibration ?? document.calibration
        // The ceiling's calibration: a stored one (which surfaces can write) only tightens it.
        configuration.ceilingCalibration = OutputCeiling.startCalibration(commandLine: levels.calibration,
                                                                          stored: document.calibration)
        if let earphone {
            configuration.earphone = try EarphoneTable.named(earphone) ?? EarphoneFile.load(earphone)
            configuration.earphoneIsExplicit = true
        }

        let application = try SoundFitApplication(configuration: configuration, logger: logger) { ready in
            // One machine-readable line on stdout for scripts and tests.
            print(ready.line)
            fflush(nil)
            if let hint = ready.privateServerHint { logger.notice("\(hint)") }
            onReady()
        }
        if osc.exposure == .network {
            logger.warning("OSC listens on \(oscHost): other hosts on that network can control SoundFit\(oscAllowEntries.isEmpty ? " (restrict them with --osc-allow)" : ""); answers are budgeted per source address")
        }
        return application
    }
}
