import Dispatch
import Glibc

/// Waits for SIGINT or SIGTERM without a signal handler doing any work itself.
enum ShutdownSignal {
    /// Returns the name of the first shutdown signal received.
    static func wait() async -> String {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "soundfit.signals")
            var sources: [DispatchSourceSignal] = []
            let resumed = ResumeOnce(continuation)
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { resumed.resume(name) }
                source.resume()
                sources.append(source)
            }
            // The sources live as long as the process runs.
            Self.keepAlive = sources
        }
    }

    nonisolated(unsafe) private static var keepAlive: [DispatchSourceSignal] = []
}

/// Resumes a continuation exactly once, from the signal queue.
private final class ResumeOnce: @unchecked Sendable {
    private var continuation: CheckedContinuation<String, Never>?
    init(_ continuation: CheckedContinuation<String, Never>) { self.continuation = continuation }
    func resume(_ value: String) {
        continuation?.resume(returning: value)
        continuation = nil
    }
}
