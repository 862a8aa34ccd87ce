import Foundation
import SoundFit
import SoundFitState

/// An `/nsm/client/open` checked before anything running is stopped: its client id is a JACK
/// client name, its path an absolute normalized directory SoundFit can create, read and write,
/// its state files readable, and its directory locked for this process. A switch is refused
/// (and the running session kept) when any of this fails, not after the old SoundFit stopped.
///
/// Thread rules: `prepare` does blocking file I/O (a few syscalls); call it from a control task.
struct NSMPreparedOpen: Sendable {
    var open: NSMOpen
    /// The normalized state directory.
    var directory: URL
    /// The directory's lock, taken by `prepare` (shared with the running SoundFit when it is
    /// the path already open: the lock is per process).
    var lock: StateDirectoryLock

    /// Checks `open` and locks its directory.
    static func prepare(_ open: NSMOpen) throws(NSMRefusal) -> NSMPreparedOpen {
        guard !open.clientID.isEmpty, open.clientID.utf8.count <= 63, !open.clientID.contains(":") else {
            throw NSMRefusal(.general, "the client id '\(open.clientID)' cannot be a JACK client name (1…63 characters without ':')")
        }
        let requested = try open.stateDirectory()
        let directory: URL
        do {
            directory = try StateDirectory.prepare(requested.path)
        } catch {
            throw NSMRefusal(.createFailed, "\(error)")
        }
        try checkReadable(directory)
        do {
            let lock = try StateDirectoryLock(directory: directory)
            return NSMPreparedOpen(open: open, directory: directory, lock: lock)
        } catch {
            throw NSMRefusal(error.isHeldElsewhere ? .sessionLocked : .general, error.description)
        }
    }

    /// The state files SoundFit reads at start, when present, are regular files it can open
    /// for reading (a corrupt one is set aside and logged at start; one that cannot be read at
    /// all would be set aside too and the session's state silently replaced by the defaults).
    private static func checkReadable(_ directory: URL) throws(NSMRefusal) {
        for name in [DurableStateStore.fileName, DocumentSettings.fileName] {
            let path = directory.appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: path),
                  let handle = FileHandle(forReadingAtPath: path) else {
                throw NSMRefusal(.badProject, "the saved state \(path) cannot be read")
            }
            try? handle.close()
        }
    }
}
