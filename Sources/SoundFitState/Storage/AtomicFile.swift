import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file could not be written, read or removed; the message names the file and the
/// system's reason.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Durable, atomic file replacement: after `write(_:to:)` returns, the file holds the new data
/// and survives a power loss; if the process dies (`kill -9`) or the machine crashes at any
/// point, the file holds either its old content or the new one, never a mix or a truncation.
///
/// How: write a temporary file in the same directory (`.<name>.tmp-<pid>-<random>`), `fsync` it,
/// `rename` it over the target (atomic on POSIX file systems), then `fsync` the directory so
/// the rename itself is durable. A crash can leave a temporary file behind; it is never read,
/// and `removeTemporaries(in:)` cleans up.
///
/// Thread rules: blocking file I/O (a few milliseconds, more on a busy disk); call it from a
/// control task or a background queue, never from the audio thread. Two writers of the same
/// target each leave a complete file; the last rename wins.
public enum AtomicFile {
    /// Replaces `url`'s content with `data` atomically and durably. `permissions` apply to a new
    /// file and to a replaced one (the temporary file's mode becomes the file's).
    public static func write(_ data: Data, to url: URL, permissions: mode_t = 0o644) throws(FileError) {
        let temporary = try writeTemporary(data, for: url, permissions: permissions)
        do {
            try commit(temporary, to: url)
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    /// Removes `url` durably (the directory is synced). Missing files are an error.
    public static func remove(_ url: URL) throws(FileError) {
        guard unlink(url.path) == 0 else { throw failure("cannot remove", url) }
        try syncDirectory(of: url)
    }

    /// Deletes temporary files a crash left in `directory` (names `.<name>.tmp-*`). Only call
    /// it while no other process writes in `directory` (one SoundFit per state directory).
    public static func removeTemporaries(in directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where isTemporaryName(name) {
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// Whether `name` is one of this type's temporary file names.
    public static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".") && name.contains(".tmp-")
    }

    // MARK: Steps (internal so tests can stop between them, as a crash would)

    /// Step 1: writes and syncs a new temporary file next to `url`; returns its URL.
    static func writeTemporary(_ data: Data, for url: URL, permissions: mode_t = 0o644) throws(FileError) -> URL {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw failure("cannot create a temporary file for", url) }
        var failed: FileError?
        // The umask may have narrowed the mode; make it exactly `permissions`.
        if fchmod(descriptor, permissions) != 0 { failed = failure("cannot set permissions of", temporary) }
        if failed == nil {
            failed = data.withUnsafeBytes { buffer -> FileError? in
                var offset = 0
                while offset < buffer.count {
                    let written = posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return failure("cannot write", url)
                    }
                    offset += written
                }
                return nil
            }
        }
        if failed == nil, fsync(descriptor) != 0 { failed = failure("cannot sync", url) }
        if close(descriptor) != 0, failed == nil { failed = failure("cannot close", url) }
        if let failed {
            unlink(temporary.path)
            throw failed
        }
        return temporary
    }

    /// Step 2: renames the synced temporary file over `url` and syncs the directory.
    static func commit(_ temporary: URL, to url: URL) throws(FileError) {
        guard rename(temporary.path, url.path) == 0 else { throw failure("cannot replace", url) }
        try syncDirectory(of: url)
    }

    /// Makes `backup` a copy of `url` atomically (a hard link renamed into place; a copy where
    /// hard links are not supported). `url` is only ever replaced by rename, so the link keeps
    /// the old content after the next write.
    static func preserve(_ url: URL, as backup: URL) throws(FileError) {
        let linkURL = backup.deletingLastPathComponent().appendingPathComponent(
            ".\(backup.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))")
        if link(url.path, linkURL.path) == 0 {
            guard rename(linkURL.path, backup.path) == 0 else {
                let error = failure("cannot replace", backup)
                unlink(linkURL.path)
                throw error
            }
            return
        }
        guard let data = FileManager.default.contents(atPath: url.path) else { throw failure("cannot read", url) }
        try write(data, to: backup, permissions: currentPermissions(of: url) ?? 0o600)
    }

    /// Syncs the directory holding `url`, making renames and removals in it durable.
    static func syncDirectory(of url: URL) throws(FileError) {
        let directory = url.deletingLastPathComponent()
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open the directory", directory) }
        defer { close(descriptor) }
        // Some file systems cannot sync directories (EINVAL); the rename is still atomic there.
        guard fsync(descriptor) == 0 || errno == EINVAL else { throw failure("cannot sync the directory", directory) }
    }

    private static func currentPermissions(of url: URL) -> mode_t? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// `cannot write /path/state.json: No space left on device`.
    private static func failure(_ what: String, _ url: URL) -> FileError {
        FileError("\(what) \(url.path): \(String(cString: strerror(errno)))")
    }
}

/// `write(2)`, outside `AtomicFile` whose `write` would shadow it.
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
