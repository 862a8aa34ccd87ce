import Foundation
import OSCCore
import SoundFitHearing
import SoundFitJack
import SoundFitModel
import SoundFitOSC
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState
import SoundFitWeb

/// Everything a running SoundFit is told before it starts: the JACK client, the OSC socket,
/// the processing session, and where its state lives.
public struct SoundFitConfiguration: Sendable {
    /// The JACK client (name, server, channels, physical connections, private server).
    public var jack: JackHostConfiguration
    /// The OSC socket and who may use it.
    public var osc: OSC
    /// The HTTP and WebSocket port (OSCQuery, the web page, OSC over WebSocket), on the OSC host
    /// and allow-list; nil serves none.
    public var web: Web?
    /// Whether the JACK client has the MIDI control input `midi_in` (`--no-midi`: none; the
    /// mappings stay in the state, and `/midi/learn` says why nothing can come).
    public var midiInput = true
    /// The session activated on every connection (personalization mode and tech level); the
    /// engine's personalization stage is built for its tech level.
    public var session: ProcessingConfiguration
    /// A hearing profile submitted once the first session is active. It replaces a restored
    /// profile and the restored session values (the recommendation for the new profile follows).
    public var hearingProfile: HearingProfile?
    /// Durable state and patches; `nil` runs without either (nothing is restored or saved).
    public var persistence: Persistence?
    /// The output safety limit, dB SPL through the calibration (`SoundFitRuntime.maximumOutputRange`).
    public var maximumOutputSPL = SoundFitRuntime.defaultMaximumOutputSPL
    /// The calibration: the dB SPL a full-scale sine stands for at the ear
    /// (`PresetPayload.calibrationRange`, 80…130). A document-level setting.
    public var calibration = PresetGenerator.defaultCalibration
    /// The calibration the ceiling is fixed through (`OutputCeiling.startCalibration`); nil:
    /// `calibration`.
    public var ceilingCalibration: Double?
    /// The ceiling: `maximumOutputSPL` through `ceilingCalibration`, fixed for the run.
    public var outputCeiling: OutputCeiling {
        OutputCeiling(maximumOutputSPL: maximumOutputSPL, fullScaleSPL: ceilingCalibration ?? calibration)
    }
    /// The earphone's RETSPL table the hearing test starts with (`--earphone`; `/test/earphone` changes it).
    public var earphone = EarphoneTable.tdh39
    /// `earphone` was given (`--earphone`): it wins over the table kept in `calibration.json`.
    public var earphoneIsExplicit = false

    public struct OSC: Sendable {
        /// The address to listen on; anything but loopback lets other hosts control SoundFit.
        public var host: String
        /// The UDP port, and the TCP port when `tcp` is on; 0 picks a free one (the bound port
        /// is in `SoundFitReady`).
        public var port: UInt16
        /// Whether OSC over TCP (SLIP or length-prefixed framing) is served on the same port.
        public var tcp: Bool
        /// The senders that are answered.
        public var allowList: OSCAllowList
        /// The allow-list as the user wrote it, kept in the document settings.
        public var allowEntries: [String]
        /// How long a subscription lasts unless renewed.
        public var subscriptionLease: Duration

        public init(host: String = "127.0.0.1", port: UInt16 = 7700, tcp: Bool = true, allowList: OSCAllowList = .everyone,
                    allowEntries: [String] = [], subscriptionLease: Duration = SubscriberRegistry.defaultLease) {
            self.host = host
            self.port = port
            self.tcp = tcp
            self.allowList = allowList
            self.allowEntries = allowEntries
            self.subscriptionLease = subscriptionLease
        }

        /// Whether the port can be reached beyond this host (then answers are budgeted per source).
        public var exposure: OSCExposure { OSCExposure(listeningOn: host) }
    }

    /// The HTTP and WebSocket port and what it serves.
    public struct Web: Sendable {
        /// The TCP port; 0 picks a free one (the bound port is in `SoundFitReady`).
        public var port: UInt16
        /// The web page's folder, served under `/ui`; nil serves no page.
        public var pageDirectory: URL?
        public var limits: WebLimits
        /// `--http-allow-host`: names besides loopback and the listening address that requests
        /// may carry in `Host` (see `WebAccess`).
        public var allowedHosts: [String] = []
        /// `--http-allow-origin`: origins besides the page's own that may open a WebSocket.
        public var allowedOrigins: [String] = []
        /// `--http-token`; nil: a random one when the port is exposed beyond loopback, else none.
        public var token: String?

        public init(port: UInt16 = 7701, pageDirectory: URL? = nil, limits: WebLimits = WebLimits()) {
            self.port = port
            self.pageDirectory = pageDirectory
            self.limits = limits
        }
    }

    /// Where the state and the document settings are written, and the patches to offer.
    public struct Persistence: Sendable {
        /// An existing directory, owned by this SoundFit.
        public var stateDirectory: URL
        /// Factory and user patches (user patches live in `stateDirectory`).
        public var patches: PatchLibrary
        /// The directory's lock, held as long as this configuration lives (one SoundFit per
        /// state directory); nil when the caller guarantees that itself.
        public var lock: StateDirectoryLock?

        public init(stateDirectory: URL, patches: PatchLibrary, lock: StateDirectoryLock? = nil) {
            self.stateDirectory = stateDirectory
            self.patches = patches
            self.lock = lock
        }
    }

    public init(jack: JackHostConfiguration = JackHostConfiguration(), osc: OSC = OSC(),
                session: ProcessingConfiguration, hearingProfile: HearingProfile? = nil,
                persistence: Persistence? = nil) {
        self.jack = jack
        self.osc = osc
        self.session = session
        self.hearingProfile = hearingProfile
        self.persistence = persistence
    }
}

/// What a started SoundFit reports once it is ready: connected, session handled, answering OSC.
public struct SoundFitReady: Sendable {
    /// The bound OSC socket.
    public var osc: OSCPeer
    /// The OSC over TCP listener; nil when it is off.
    public var oscTCP: OSCPeer?
    /// The HTTP and WebSocket port; nil when it is off.
    public var http: OSCPeer?
    /// The token the HTTP port requires (`WebAccess`); nil when it requires none.
    public var httpToken: String?
    public var clientName: String
    public var serverName: String
    public var channelCount: Int
    /// The server is SoundFit's own private dummy-backend server (none was running): silent,
    /// and named `soundfit-private-UID-K`, so JACK's tools reach it only by that name.
    public var usesPrivateServer: Bool

    public init(osc: OSCPeer, oscTCP: OSCPeer? = nil, http: OSCPeer? = nil, clientName: String, serverName: String,
                channelCount: Int, usesPrivateServer: Bool = false) {
        self.osc = osc
        self.oscTCP = oscTCP
        self.http = http
        self.clientName = clientName
        self.serverName = serverName
        self.channelCount = channelCount
        self.usesPrivateServer = usesPrivateServer
    }

    /// The line `soundfit run` prints on stdout for scripts:
    /// `soundfit ready osc=udp://127.0.0.1:7700 osc_tcp=tcp://127.0.0.1:7700 http=http://127.0.0.1:7701 client=… server=… channels=2`
    /// (`osc_tcp=off` with `--no-osc-tcp`, `http=off` with `--no-http`, `http=http://HOST:PORT/?token=T` when the
    /// HTTP port requires a token; ` private_server=dummy` at
    /// the end when the server is SoundFit's own).
    public var line: String {
        "soundfit ready osc=udp://\(osc) osc_tcp=\(oscTCP.map { "tcp://\($0)" } ?? "off") "
            + "http=\(http.map { "http://\($0)" + (httpToken.map { "/?token=\($0)" } ?? "") } ?? "off") client=\(clientName) "
            + "server=\(serverName) channels=\(channelCount)" + (usesPrivateServer ? " private_server=dummy" : "")
    }

    /// For a person at the terminal, with a private server: how JACK's tools reach it (they look
    /// for `$JACK_DEFAULT_SERVER`, else "default", and fail with "server is not running"), and
    /// that it makes no sound. Nil with a server the user started.
    public var privateServerHint: String? {
        guard usesPrivateServer else { return nil }
        return "JACK server '\(serverName)' is SoundFit's own, with the dummy backend: it makes no sound and "
            + "stops with SoundFit. JACK tools reach it by name: `jack_lsp -s \(serverName)`, or "
            + "`export JACK_DEFAULT_SERVER=\(serverName)` first. To hear SoundFit, start JACK on your sound card "
            + "before SoundFit (docs/running.md, \"Using a sound card\")."
    }
}
