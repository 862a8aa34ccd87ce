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
            session: .fineTuning(fitting: try Fitting(techLevel: techLevel)))
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
