import Foundation
import Glibc

/// An advisory lock on a state directory (`<directory>/soundfit.lock`, `flock`), held for as
/// long as the value lives: one SoundFit per state directory, so two instances never overwrite
/// each other's state, and `state import` never replaces the state under a running instance.
///
/// The lock dies with the process (also after `kill -9`); the file only carries the holder's
/// pid for the message. The descriptor is close-on-exec, so a child (the private jackd) never
/// inherits it. Thread rules: acquire and release on any control thread.
public final class StateDirectoryLock: Sendable {
    public static let fileName = "soundfit.lock"

    /// Why the lock could not be taken. The description is the message for the user.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    private let descriptor: Int32

    /// Takes the lock on `directory` without waiting; throws when another process holds it.
    public init(directory: URL) throws(Refusal) {
        let path = directory.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Refusal(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.holder(fd)
            Glibc.close(fd)
            guard reason == EWOULDBLOCK else {
                throw Refusal(description: "cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw Refusal(description: """
                the state directory \(directory.path) is in use by another SoundFit\(holder.map { " (pid \($0))" } ?? ""): \
                give this one its own with --state-dir, or stop the other first
                """)
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = fd
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// The pid written by the process that holds the lock, if readable.
    private static func holder(_ fd: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
