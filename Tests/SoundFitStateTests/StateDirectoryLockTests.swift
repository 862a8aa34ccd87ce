import Foundation
import Glibc
@testable import SoundFitState
import Testing

/// The state directory's lock is a `flock` on the directory itself, shared within the process
/// that holds it (an NSM switch to the same path) and released with its last value.
@Suite struct StateDirectoryLockUnitTests {
    /// Whether a `flock` on a new descriptor of `directory` would be granted now (a new open
    /// file description conflicts with the lock even in this process).
    private func isFree(_ directory: URL) -> Bool {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    @Test func theDirectoryIsLockedUntilTheLastValueSharingItGoes() throws {
        let state = try TemporaryDirectory()
        var first: StateDirectoryLock? = try StateDirectoryLock(directory: state.url)
        #expect(!isFree(state.url))
        #expect(state.url.appendingPathComponent(StateDirectoryLock.fileName).text == "\(getpid())\n")
        // Another spelling of the same directory shares the lock.
        var second: StateDirectoryLock? = try StateDirectoryLock(directory: state.url.appendingPathComponent(".", isDirectory: true))
        first = nil
        #expect(!isFree(state.url), "released while a second value still holds it")
        _ = (first, second)
        second = nil
        #expect(isFree(state.url))
    }

    @Test func aDeletedPidFileLosesOnlyThePid() throws {
        let state = try TemporaryDirectory()
        let lock = try StateDirectoryLock(directory: state.url)
        try FileManager.default.removeItem(at: state.url.appendingPathComponent(StateDirectoryLock.fileName))
        #expect(!isFree(state.url))
        withExtendedLifetime(lock) {}
    }

    @Test func aMissingDirectoryIsRefusedWithItsPath() {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")
        do {
            _ = try StateDirectoryLock(directory: missing)
            Issue.record("locked a missing directory")
        } catch {
            #expect(!error.isHeldElsewhere && error.description.contains(missing.path), "\(error)")
        }
    }
}
