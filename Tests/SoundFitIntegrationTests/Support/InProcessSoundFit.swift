import Foundation
import Logging
import SoundFitModel
import SoundFitEngine
import SoundFitJack
import SoundFitOSC
import SoundFitProcessing
import SoundFitRuntime

/// SoundFit wired inside the test process the way `soundfit run` wires it (engine, JACK host,
/// runtime whose session follows the connection, OSC surface on a free port), for tests that
/// must observe the JACK thread itself — the allocation counter only sees this process.
final class InProcessSoundFit {
    let engine: AudioEngine
    let host: JackEngineHost
    let runtime: SoundFitRuntime
    let socket: OSCSocket
    private let surface: OSCControlSurface
    private let lifecycle: Task<Void, Never>
    private var running = false

    init(server: String, clientName: String, techLevel: Int = 3, label: String) throws {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        engine = AudioEngine(techLevel: techLevel)
        var configuration = JackHostConfiguration()
        configuration.clientName = clientName
        configuration.serverName = server
        configuration.startsPrivateServer = false
        configuration.channelCount = 2
        host = JackEngineHost(configuration: configuration, engine: engine, logger: logger)
        let runtime = SoundFitRuntime(engine: engine, sessionConfiguration: .fineTuning(fitting: try Fitting(techLevel: techLevel)))
        self.runtime = runtime
        let host = self.host
        lifecycle = Task {
            for await event in host.events {
                switch event {
                case .connected: try? await runtime.audioSystemConnected()
                case .disconnected: await runtime.audioSystemDisconnected()
                }
            }
        }
        socket = try OSCSocket(host: "127.0.0.1", port: 0)
        surface = OSCControlSurface(runtime: runtime, socket: socket, logger: logger) {
            SurfaceStatus(fields: [("connected", .int32(1))])
        }
    }

    /// Connects to the server and starts answering OSC.
    func start() throws {
        do {
            try host.start()
        } catch {
            socket.close(receiving: false)
            lifecycle.cancel()
            throw error
        }
        running = true
        surface.start()
    }

    /// Closes the OSC socket and the JACK client. Idempotent.
    func stop() {
        lifecycle.cancel()
        guard running else { return }
        running = false
        socket.close()
        host.stop()
    }
}
