import Foundation
import Glibc
import Synchronization

/// An advisory lock on a state directory, held for as long as the value lives: one SoundFit
/// per state directory, so two instances never overwrite each other's state, and `state import`
/// never replaces the state under a running instance.
///
/// The lock is a `flock` on a descriptor of the directory itself, not on a file in it: a file
/// can be deleted (or replaced) while its lock is held, and the next instance would then lock
/// a new file and run beside the first; the directory cannot go away while it is open. The
/// file `<directory>/soundfit.lock` only carries the holder's pid for the message (rewritten
/// by every holder; a deleted one only loses the pid from the message).
///
/// The lock is per process: another lock of the same directory in the process that holds it
/// shares the one `flock` (counted; released with the last value). An NSM switch to the path
/// already open, or back to the previous one, must not depend on when the stopped SoundFit's
/// last reference goes away.
///
/// The lock dies with the process (also after `kill -9`). The descriptors are close-on-exec,
/// so a child (the private jackd) never inherits them. Thread rules: acquire and release on any
/// control thread.
public final class StateDirectoryLock: Sendable {
    public static let fileName = "soundfit.lock"

    /// Why the lock could not be taken. The description is the message for the user.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
        /// Another process holds the lock (false: the directory could not be opened or locked).
        public var isHeldElsewhere: Bool
    }

    /// A directory by device and inode (its path may have other spellings).
    private struct DirectoryID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The directories this process has locked: the locked descriptor and how many values share it.
    private struct Held {
        var descriptor: Int32
        var holders: Int
    }

    private static let held = Mutex<[DirectoryID: Held]>([:])

    private let id: DirectoryID

    /// Takes the lock on `directory` without waiting; throws when another process holds it.
    public init(directory: URL) throws(Refusal) {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Refusal(description: "cannot open the state directory \(directory.path): \(String(cString: strerror(errno)))",
                          isHeldElsewhere: false)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = errno
            Glibc.close(fd)
            throw Refusal(description: "cannot read the state directory \(directory.path): \(String(cString: strerror(reason)))",
                          isHeldElsewhere: false)
        }
        let id = DirectoryID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        // Shared or taken under the registry's lock, so a release never races a take.
        let failure: Int32? = Self.held.withLock { held in
            if var entry = held[id] {
                entry.holders += 1
                held[id] = entry
                Glibc.close(fd)
                return nil
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                Glibc.close(fd)
                return reason
            }
            held[id] = Held(descriptor: fd, holders: 1)
            return nil
        }
        let pidPath = directory.appendingPathComponent(Self.fileName).path
        if let reason = failure {
            guard reason == EWOULDBLOCK else {
                throw Refusal(description: "cannot lock the state directory \(directory.path): \(String(cString: strerror(reason)))",
                              isHeldElsewhere: false)
            }
            let holder = Self.holder(pidPath)
            throw Refusal(description: """
                the state directory \(directory.path) is in use by another SoundFit\(holder.map { " (pid \($0))" } ?? ""): \
                give this one its own with --state-dir, or stop the other first
                """, isHeldElsewhere: true)
        }
        self.id = id
        Self.writePid(pidPath)
    }

    deinit {
        Self.held.withLock { held in
            guard var entry = held[id] else { return }
            entry.holders -= 1
            if entry.holders == 0 {
                Glibc.close(entry.descriptor)
                held[id] = nil
            } else {
                held[id] = entry
            }
        }
    }

    /// Writes this process's pid into the pid file (best effort: the lock does not depend on it).
    private static func writePid(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    /// The pid written by the process that holds the lock, if readable.
    private static func holder(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
