import Foundation
import Logging
import Synchronization
import SoundFitModel
import SoundFitOSC
import SoundFitProcessing
import SoundFitRuntime

/// A running SoundFit inside an NSM session, after `/nsm/client/open` was answered: saves on
/// `/nsm/client/save`, reports `/nsm/client/is_dirty` when a writable parameter's applied value
/// differs from the last save and `/nsm/client/is_clean` when the save (or a change back)
/// makes them equal again.
///
/// SoundFit keeps journaling every applied change to the state directory as it always does
/// (a crash loses nothing); "dirty" means: changed since the session manager last saved.
///
/// An `/nsm/client/open` while running is first prepared (checked, its state directory
/// locked) by the owner's `prepare`, while this SoundFit keeps running: a refused one is
/// answered with `/error` and this session carries on; a prepared one ends `run()`, and the
/// owner stops this SoundFit and opens the new path (`:switch:`).
///
/// The optional GUI is the web surface: `show_optional_gui` opens its page in the desktop's
/// browser (`xdg-open`); a browser tab cannot be closed from here, so `hide_optional_gui` only
/// reports it hidden (the session manager's button follows; the tab stays until closed).
///
/// Thread rules: `run()` in one task for the application's lifetime; ends when cancelled.
public final class NSMSession: Sendable {
    public static let saveAddress = "/nsm/client/save"

    private let client: NSMClient
    private let stateKeeper: StateKeeper
    private let logger: Logger
    /// The web surface's page, shown as the optional GUI; nil without the HTTP port.
    private let webPage: URL?
    private let changes: AsyncStream<ParameterChange<ParameterValue>>
    private let state: Mutex<Tracking>
    /// "Values changed": at most one waits (a burst of changes is one evaluation).
    private let changeSignals: AsyncStream<Void>
    private let changeSignal: AsyncStream<Void>.Continuation
    /// How long the values must rest before the dirty state is evaluated and reported: a new
    /// session's values pass through their defaults on the way to the restored ones, and a
    /// fader burst is reported once, not per message.
    public static let settleTime: Duration = .milliseconds(250)

    private struct Tracking {
        var saved: [String: ParameterValue]
        var current: [String: ParameterValue]
        var reportedDirty = false

        var isDirty: Bool { current != saved }

        /// The parameters whose values differ from the last save.
        var changedAddresses: [String] {
            Set(current.keys).union(saved.keys).filter { current[$0] != saved[$0] }.sorted()
        }

        /// The dirty state to report, when it differs from the last one reported.
        mutating func reportIfChanged() -> Bool? {
            let dirty = isDirty
            guard dirty != reportedDirty else { return nil }
            reportedDirty = dirty
            return dirty
        }
    }

    /// Follows `runtime`'s changes from now on; the values now are the clean state (they were
    /// just opened from the state directory).
    public init(client: NSMClient, runtime: SoundFitRuntime, stateKeeper: StateKeeper, webPage: URL?, logger: Logger) {
        self.client = client
        self.webPage = webPage
        self.stateKeeper = stateKeeper
        self.logger = logger
        changes = runtime.changeUpdates()
        let values = stateKeeper.appliedValues
        state = Mutex(Tracking(saved: values, current: values))
        (changeSignals, changeSignal) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Saves and reports until cancelled (nil) or until the session manager opens another
    /// path that `prepare` accepts (returned: the owner switches to it). `prepare` runs on this
    /// session's task; its `NSMRefusal` is the `/error` answer (any other error: a general one).
    public func run<Prepared: Sendable>(prepare: @escaping @Sendable (NSMOpen) async throws -> Prepared) async -> Prepared? {
        // A client with an optional GUI tells its initial state once it is open.
        if webPage != nil { client.send(Self.guiHiddenAddress) }
        return await withTaskGroup(of: Prepared?.self) { group in
            group.addTask {
                await self.followChanges()
                return nil
            }
            group.addTask {
                await self.reportDirtyState()
                return nil
            }
            group.addTask { await self.answerServer(prepare: prepare) }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func followChanges() async {
        let writable = Set(StateKeeper.writableDescriptors.map(\.address))
        for await change in changes where writable.contains(change.address) {
            state.withLock { $0.current[change.address] = change.value }
            changeSignal.yield()
        }
    }

    /// Reports `is_dirty` or `is_clean` when the values, once settled, moved to the other side
    /// of the last save.
    private func reportDirtyState() async {
        for await _ in changeSignals {
            do {
                try await Task.sleep(for: Self.settleTime)
            } catch {
                return
            }
            let (report, changed) = state.withLock { ($0.reportIfChanged(), $0.changedAddresses) }
            guard let report else { continue }
            logger.info(report ? "NSM: unsaved changes (\(changed.joined(separator: ", ")))" : "NSM: back at the saved state")
            sendDirty(report)
        }
    }

    /// Answers saves; returns the next `/nsm/client/open` that `prepare` accepts (nil when
    /// cancelled). A refused one is answered here and the session goes on.
    private func answerServer<Prepared: Sendable>(prepare: @Sendable (NSMOpen) async throws -> Prepared) async -> Prepared? {
        for await message in client.messages() {
            if let open = NSMOpen(message) {
                do {
                    return try await prepare(open)
                } catch {
                    let refusal = error as? NSMRefusal ?? NSMRefusal(.general, "\(error)")
                    client.error(to: NSMOpen.address, refusal.code, refusal.description)
                    logger.error("NSM: refused the switch to \(open.path): \(refusal.description); still running in \(stateKeeper.store.directory.path)")
                    continue
                }
            }
            switch message.address {
            case Self.saveAddress:
                await save()
            case "/nsm/client/show_optional_gui" where webPage != nil:
                showWebPage()
            case "/nsm/client/hide_optional_gui" where webPage != nil:
                client.send(Self.guiHiddenAddress)
            case NSMOpen.address:
                client.error(to: NSMOpen.address, .general, "/nsm/client/open takes ,sss path display_name client_id")
            case "/nsm/client/session_is_loaded", "/reply", "/error":
                continue
            default:
                logger.debug("NSM: ignored \(message)")
            }
        }
        return nil
    }

    /// Writes the state atomically, replies, and reports clean.
    private func save() async {
        do {
            let values = try await stateKeeper.save()
            state.withLock { tracking in
                tracking.saved = values
                // Changes that arrived before their values were read are in `values` already.
                tracking.current.merge(values) { _, saved in saved }
                tracking.reportedDirty = false
            }
            client.reply(to: Self.saveAddress, "SoundFit state saved in \(stateKeeper.store.directory.path)")
            sendDirty(false)
            logger.info("NSM: state saved in \(stateKeeper.store.directory.path)")
        } catch {
            client.error(to: Self.saveAddress, .general, "the state could not be saved: \(error)")
            logger.error("NSM: the state could not be saved: \(error)")
        }
    }

    static let guiShownAddress = "/nsm/client/gui_is_shown"
    static let guiHiddenAddress = "/nsm/client/gui_is_hidden"

    /// Opens the web page with `xdg-open` (found on `PATH`) and reports it shown; reports it
    /// hidden, with the reason in the log, when no browser could be asked to open it.
    private func showWebPage() {
        guard let webPage else { return }
        let opener = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            .split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("xdg-open") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        guard let opener else {
            logger.warning("NSM: cannot show the web surface: no xdg-open on PATH; open \(webPage.absoluteString) in a browser")
            client.send(Self.guiHiddenAddress)
            return
        }
        let process = Process()
        process.executableURL = opener
        process.arguments = [webPage.absoluteString]
        do {
            try process.run()
            logger.notice("NSM: showing the web surface at \(webPage.absoluteString)")
            client.send(Self.guiShownAddress)
        } catch {
            logger.warning("NSM: cannot show the web surface (\(opener.path): \(error)); open \(webPage.absoluteString) in a browser")
            client.send(Self.guiHiddenAddress)
        }
    }

    private func sendDirty(_ dirty: Bool) {
        client.send(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean")
    }
}
