import CAllocationCounter
import CRealtimeSupport
import Foundation
import Logging
import ServiceLifecycle
import SoundFit
import Synchronization

/// SoundFit running inside the test process, assembled by the same `SoundFitApplication` that
/// `soundfit run` uses (without persistence, OSC on a free port), for tests that must observe
/// the JACK thread itself — the allocation counter only sees this process.
final class InProcessSoundFit {
    let application: SoundFitApplication
    var engine: AudioEngine { application.engine }
    var socket: OSCSocket { application.socket }
    private let services: ServiceGroup
    private let ready = DispatchSemaphore(value: 0)
    private let failure = Failure()
    private let finished = DispatchSemaphore(value: 0)
    private var running = false

    init(server: String, clientName: String, techLevel: Int = 3, label: String) throws {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        var jack = JackHostConfiguration()
        jack.clientName = clientName
        jack.serverName = server
        jack.startsPrivateServer = false
        jack.channelCount = 2
        let configuration = SoundFitConfiguration(
            jack: jack, osc: .init(host: "127.0.0.1", port: 0),
            session: .fineTuning(techLevel: try TechLevel(techLevel)))
        let ready = self.ready
        application = try SoundFitApplication(configuration: configuration, logger: logger) { _ in ready.signal() }
        services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
    }

    /// Connects to the server and starts answering OSC; returns once SoundFit is ready.
    func start() throws {
        let services = self.services, failure = self.failure, ready = self.ready, finished = self.finished
        Task {
            do {
                try await services.run()
            } catch {
                failure.error.withLock { $0 = error }
            }
            ready.signal()
            finished.signal()
        }
        ready.wait()
        if let error = failure.error.withLock({ $0 }) {
            finished.wait()
            throw error
        }
        running = true
    }

    /// Shuts SoundFit down gracefully (OSC socket, JACK client) and waits until it stopped.
    /// Idempotent.
    func stop() {
        guard running else { return }
        running = false
        let services = self.services
        Task { await services.triggerGracefulShutdown() }
        finished.wait()
    }
}

/// How `ServiceGroup.run()` ended, when it failed.
private final class Failure: Sendable {
    let error = Mutex<(any Error)?>(nil)
}

/// What every zero-allocation test sets up: the allocation counter installed, a private JACK
/// server (64 frames), SoundFit in this process as `clientName`, an OSC client whose `/ping` was
/// answered (and, when asked, the session announced), and a test JACK client connected to
/// SoundFit's ports, playing `signals` when given. The counters are read just before SoundFit
/// starts, so a test can count from its very first cycle. `stop()` takes it down; idempotent.
final class InProcessRealtimeRig {
    let server: TestJackServer
    let soundfit: InProcessSoundFit
    let osc: OSCTestClient
    let audio: TestJackClient
    /// The allocation counter's totals before SoundFit started.
    let countsBeforeStart: AllocationCounts
    var engine: AudioEngine { soundfit.engine }

    init(clientName: String, label: String, waitForSession: Bool = false, playing signals: [[Float]] = []) throws {
        soundfit_allocation_counter_install()
        let server = try TestJackServer(period: 64)
        var soundfit: InProcessSoundFit?
        var audio: TestJackClient?
        do {
            let started = try InProcessSoundFit(server: server.name, clientName: clientName, label: label)
            countsBeforeStart = AllocationCounts.now()
            try started.start()
            soundfit = started
            let osc = try OSCTestClient(port: started.socket.boundPeer.port)
            try osc.ping()
            if waitForSession { _ = try osc.waitForSession() }
            let client = try TestJackClient(server: server.name, channels: 2)
            audio = client
            try client.connect(toClient: clientName)
            if !signals.isEmpty { try client.startPlaying(signals) }
            self.osc = osc
        } catch {
            audio?.close()
            soundfit?.stop()
            server.stop()
            throw error
        }
        self.server = server
        self.soundfit = soundfit!
        self.audio = audio!
    }

    /// The test client's ports closed, SoundFit stopped, the server stopped.
    func stop() {
        audio.close()
        soundfit.stop()
        server.stop()
    }
}
