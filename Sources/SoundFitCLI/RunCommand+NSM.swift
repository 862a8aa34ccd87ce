import Foundation
import Logging
import ServiceLifecycle
import SoundFit
import Synchronization

/// `soundfit run` started by an NSM session manager (`NSM_URL` set): announce, wait for
/// `/nsm/client/open`, open its path as the state directory with its client id as the JACK
/// client name, answer, then join JACK and run as usual while the session saves and follows
/// the dirty state (`NSMSession`); another open switches to its path and client id.
///
/// An open is answered once its SoundFit is ready (JACK joined, OSC answering), or with `/error`
/// when it cannot start. A switch is checked (`NSMPreparedOpen`) while the running SoundFit
/// keeps running: a refused one is answered with `/error` and changes nothing. Should the new
/// SoundFit still fail to start after the old one stopped (JACK refusing the client, say), the
/// open is answered with `/error` and the previous path is opened again.
extension RunCommand {
    func runInSession(url: String, logger: Logger) async throws {
        let client: NSMClient
        do {
            client = try NSMClient(url: url, logger: logger)
        } catch {
            throw CLIError("cannot join the NSM session: \(error)")
        }
        defer { client.close() }
        let executable = ProcessInfo.processInfo.arguments.first ?? "soundfit"
        logger.notice("NSM_URL is set: announcing SoundFit to the session manager at \(client.server) and waiting up to \(nsmOpenTimeout) s for /nsm/client/open")
        client.announce(name: "SoundFit", executable: executable, optionalGUI: !noHttp && webPageDirectory != nil)

        let first = try await waitForOpen(client, logger: logger)
        var current: NSMPreparedOpen
        do {
            current = try NSMPreparedOpen.prepare(first)
        } catch {
            client.error(to: NSMOpen.address, error.code, error.description)
            throw CLIError("NSM: cannot open \(first.path): \(error.description)")
        }
        // Each open runs one SoundFit; an open while it runs stops it (its state is flushed,
        // its JACK client closed, its lock released) and opens the new path (`:switch:`).
        var previous: NSMOpen?
        var reopening = false
        while true {
            let next: NSMPreparedOpen?
            do {
                // The previous path opened again after a failed switch is not answered: the
                // session manager asked for the other one and got its `/error`.
                next = try await runOpened(current, client: client, answering: !reopening, logger: logger)
            } catch let failure as StartFailure {
                guard let back = previous else { throw failure.error }
                logger.error("NSM: cannot switch to \(current.open.path) (\(failure.message)); opening \(back.path) again")
                do {
                    current = try NSMPreparedOpen.prepare(back)
                } catch {
                    throw CLIError("NSM: cannot open \(back.path) again: \(error.description)")
                }
                previous = nil
                reopening = true
                continue
            }
            reopening = false
            guard let next else { return }
            logger.notice("NSM: switching from \(current.open.path) to \(next.open.path)")
            previous = current.open
            current = next
        }
    }

    /// Whether the SoundFit of an open became ready, and a wait for it. `signal` from the ready
    /// callback (any thread); `wait` from one task.
    private final class ReadySignal: Sendable {
        private let state = Mutex(false)
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        var isReady: Bool { state.withLock { $0 } }

        func signal() {
            state.withLock { $0 = true }
            continuation.yield()
            continuation.finish()
        }

        /// True once ready; false when the waiting task was cancelled first.
        func wait() async -> Bool {
            for await _ in stream { return true }
            return isReady
        }
    }

    /// The SoundFit of an open could not be created or started (answered already with `/error`).
    private struct StartFailure: Error {
        var error: any Error
        var message: String
    }

    /// Opens `prepared`'s path and client id, answers the session manager (when `answering`)
    /// once it is ready, and runs until a signal (nil) or the next prepared open (returned).
    /// Throws `StartFailure` when it ends before it was ready.
    private func runOpened(_ prepared: NSMPreparedOpen, client: NSMClient, answering: Bool,
                           logger: Logger) async throws -> NSMPreparedOpen? {
        let open = prepared.open
        logger.notice("NSM: opening '\(open.displayName)' as client '\(open.clientID)' with state in \(prepared.directory.path)")
        let directory = prepared.directory
        let ready = ReadySignal()
        let application: SoundFitApplication
        do {
            application = try makeApplication(logger: logger, session: prepared) {
                // The answer first: the session's first message (the GUI state) must follow it.
                if answering { client.reply(to: NSMOpen.address, "SoundFit state opened in \(directory.path)") }
                ready.signal()
            }
        } catch {
            let reason = "\(error)"
            if answering { client.error(to: NSMOpen.address, .createFailed, reason) }
            throw StartFailure(error: error, message: reason)
        }
        guard let stateKeeper = application.stateKeeper else {
            client.error(to: NSMOpen.address, .general, "SoundFit runs without persistence")
            throw CLIError("NSM: SoundFit runs without persistence")
        }
        let session = NSMSession(client: client, runtime: application.runtime, stateKeeper: stateKeeper,
                                 webPage: application.webPage, logger: logger)

        let services = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        return try await withThrowingTaskGroup(of: NSMPreparedOpen?.self) { group in
            group.addTask {
                do {
                    try await services.run()
                } catch where !ready.isReady {
                    let reason = "\(error)"
                    if answering { client.error(to: NSMOpen.address, .general, "SoundFit could not start: \(reason)") }
                    throw StartFailure(error: error, message: reason)
                }
                return nil
            }
            // The session (saves, dirty reports, the GUI state, switches) starts once the
            // open was answered.
            group.addTask {
                guard await ready.wait() else { return nil }
                return await session.run { open in try NSMPreparedOpen.prepare(open) }
            }
            // SoundFit ends (a signal, or JACK failing): the session ends with it. The session
            // ends first with another open: SoundFit stops in order, then the switch follows.
            defer { group.cancelAll() }
            guard let first = try await group.next(), let next = first else { return nil }
            await services.triggerGracefulShutdown()
            while try await group.next() != nil {}
            return next
        }
    }

    /// The server's `/nsm/client/open`, after its answer to the announce. Fails when the
    /// server refuses the announce or does not open in `--nsm-open-timeout` seconds.
    private func waitForOpen(_ client: NSMClient, logger: Logger) async throws -> NSMOpen {
        let timeout = nsmOpenTimeout
        return try await withThrowingTaskGroup(of: NSMOpen?.self) { group in
            group.addTask {
                for await message in client.messages() {
                    if let open = NSMOpen(message) { return open }
                    switch (message.address, message.arguments.first) {
                    case ("/reply", .string("/nsm/server/announce")?):
                        let words = message.arguments.dropFirst().compactMap { if case .string(let text) = $0 { text } else { nil } }
                        logger.notice("NSM: announced: \(words.joined(separator: "; "))")
                    case ("/error", .string("/nsm/server/announce")?):
                        let reason = message.arguments.dropFirst(2).first.map { "\($0)" } ?? "no reason given"
                        throw CLIError("the NSM session manager refused SoundFit's announce: \(reason)")
                    default:
                        logger.info("NSM: ignored \(message) while waiting for /nsm/client/open")
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let open = first else {
                throw CLIError("""
                    the NSM session manager at \(client.server) did not send /nsm/client/open within \(timeout) s \
                    (unset NSM_URL to run SoundFit outside a session)
                    """)
            }
            return open
        }
    }
}
