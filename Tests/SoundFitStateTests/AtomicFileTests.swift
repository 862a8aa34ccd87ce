import Foundation
@testable import SoundFitState
import Testing

@Suite struct AtomicFileTests {
    @Test func writeLeavesTheContentAndNoTemporaryFile() throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("state.json")
        try AtomicFile.write(Data("first\n".utf8), to: target)
        #expect(target.text == "first\n")
        try AtomicFile.write(Data("second\n".utf8), to: target, permissions: 0o600)
        #expect(target.text == "second\n")
        #expect(directory.names() == ["state.json"])
        let mode = try #require(FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue == 0o600)
    }

    @Test func aCrashBeforeTheRenameLeavesTheOldFileIntact() throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("user-1.json")
        try AtomicFile.write(Data("old complete content\n".utf8), to: target)
        // The process dies after writing (and syncing) the temporary file, before the rename.
        let temporary = try AtomicFile.writeTemporary(Data("new content that never".utf8), for: target)
        #expect(target.text == "old complete content\n")
        #expect(AtomicFile.isTemporaryName(temporary.lastPathComponent))
        #expect(directory.names().count == 2)
        // The next start cleans up; the target is untouched.
        AtomicFile.removeTemporaries(in: directory.url)
        #expect(directory.names() == ["user-1.json"])
        #expect(target.text == "old complete content\n")
    }

    @Test func commitReplacesTheFileInOneStep() throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("state.json")
        try AtomicFile.write(Data("old".utf8), to: target)
        let temporary = try AtomicFile.writeTemporary(Data("new".utf8), for: target)
        try AtomicFile.commit(temporary, to: target)
        #expect(target.text == "new")
        #expect(directory.names() == ["state.json"])
    }

    @Test func preserveKeepsTheOldContentAfterTheNextWrite() throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("state.json")
        let backup = directory.url.appendingPathComponent("state.previous.json")
        try AtomicFile.write(Data("one".utf8), to: target)
        try AtomicFile.preserve(target, as: backup)
        try AtomicFile.write(Data("two".utf8), to: target)
        #expect(backup.text == "one")
        #expect(target.text == "two")
        #expect(directory.names() == ["state.json", "state.previous.json"])
    }

    @Test func failuresNameTheFile() throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("missing/state.json")
        do {
            try AtomicFile.write(Data("x".utf8), to: target)
            Issue.record("writing into a missing directory succeeded")
        } catch {
            #expect(error.message.contains(target.path))
            #expect(error.message.contains("No such file or directory"))
        }
        #expect(throws: FileError.self) { try AtomicFile.remove(directory.url.appendingPathComponent("nothing.json")) }
    }
}
