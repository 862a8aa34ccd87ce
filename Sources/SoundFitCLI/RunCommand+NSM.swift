import Foundation
import Logging
import ServiceLifecycle
import SoundFit

/// `soundfit run` started by an NSM session manager (`NSM_URL` set): announce, wait for
/// `/nsm/client/open`, open its path as the state directory with its client id as the JACK
/// client name, answer, then join JACK and run as usual while the session saves and follows
/// the dirty state (`NSMSession`); another open switches to its path and client id.
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

        var open = try await waitForOpen(client, logger: logger)
        // Each open runs one SoundFit; an open while it runs stops it (its state is flushed,
        // its JACK client closed, its lock released) and opens the new path (`:switch:`).
        while true {
            guard let next = try await runOpened(open, client: client, logger: logger) else { return }
            logger.notice("NSM: switching from \(open.path) to \(next.path)")
            open = next
        }
    }

    /// Opens `open`'s path and client id, answers the session manager, and runs until a
    /// signal (nil) or the next open (returned).
    private func runOpened(_ open: NSMOpen, client: NSMClient, logger: Logger) async throws -> NSMOpen? {
        logger.notice("NSM: opening '\(open.displayName)' as client '\(open.clientID)' with state in \(open.path)")
        guard !open.clientID.isEmpty, open.clientID.utf8.count <= 63, !open.clientID.contains(":") else {
            let reason = "the client id '\(open.clientID)' cannot be a JACK client name (1…63 characters without ':')"
            client.error(to: NSMOpen.address, .general, reason)
            throw CLIError("NSM: \(reason)")
        }
        let application: SoundFitApplication
        do {
            application = try makeApplication(logger: logger, session: open)
        } catch {
            let reason = (error as? CustomStringConvertible)?.description ?? "\(error)"
            client.error(to: NSMOpen.address, .createFailed, reason)
            throw error
        }
        guard let stateKeeper = application.stateKeeper else {
            client.error(to: NSMOpen.address, .general, "SoundFit runs without persistence")
            throw CLIError("NSM: SoundFit runs without persistence")
        }
        let session = NSMSession(client: client, runtime: application.runtime, stateKeeper: stateKeeper,
                                 webPage: application.webPage, logger: logger)
        client.reply(to: NSMOpen.address, "SoundFit state opened in \(open.path)")

        let services = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        return try await withThrowingTaskGroup(of: NSMOpen?.self) { group in
            group.addTask {
                try await services.run()
                return nil
            }
            group.addTask { await session.run() }
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
