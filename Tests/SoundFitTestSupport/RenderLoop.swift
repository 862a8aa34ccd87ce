import Foundation
import SoundFitEngine
import Synchronization

/// A stand-in audio thread: renders silent cycles of the engine on its own thread until
/// stopped, like a JACK server would (no JACK here: for the runtime's and surfaces' unit tests).
public final class RenderLoop: Sendable {
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    public init(engine: AudioEngine) {
        let thread = Thread { [self] in
            var driver = InMemoryDriver(engine: engine, blockSize: 64, channelCount: 1, followsEngineClock: true)
            while running.load(ordering: .acquiring) {
                driver.renderSilentCycle()
                usleep(500)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops rendering and waits for the thread to end; stopping again does nothing.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }
}
