import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// One SoundFit per state directory: a second instance and `state import` are refused while
    /// one runs, with a message that says why; the lock goes with the process, also after kill -9.
    @Suite("State directory lock") struct StateDirectoryLock {
        @Test("A second instance on the same state directory exits non-zero and changes nothing")
        func secondInstanceRefused() throws {
            let server = try TestJackServer()
            defer { server.stop() }
            let directory = try UniqueName.temporaryDirectory("sf-lock")
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = try SoundFitInstance(server: server, stateDirectory: directory, channels: 1)
            expectApplied(try first.osc.set("/output/gain", .float(-4)), "/output/gain", .float(-4))
            waitUntilSaved(directory, "/output/gain", -4)

            let second = try SoundFitCommandLine.run([
                "run", "--state-dir", directory.path, "--osc-port", "0", "--http-port", "0", "--server", server.name, "--no-start-server",
                "--name", "soundfit-second",
            ])
            #expect(!second.succeeded, "a second instance started on the same state directory")
            #expect(second.standardError.contains("in use by another SoundFit") && second.standardError.contains("pid \(first.process.pid)"),
                    "\(second.standardError)")
            #expect(!second.standardOutput.contains("soundfit ready"))
            #expect(try first.osc.query("/output/gain") == .float(-4))

            // `state import` is refused too, and the state stays the first instance's.
            let exported = directory.deletingLastPathComponent().appendingPathComponent("\(directory.lastPathComponent)-export.json")
            defer { try? FileManager.default.removeItem(at: exported) }
            let export = try SoundFitCommandLine.run(["state", "export", "--state-dir", directory.path, "--output", exported.path])
            #expect(export.succeeded, "export (read-only) must work while SoundFit runs: \(export.standardError)")
            let stateBefore = try? Data(contentsOf: directory.appendingPathComponent("state.json"))
            let imported = try SoundFitCommandLine.run(["state", "import", exported.path, "--state-dir", directory.path])
            #expect(!imported.succeeded && imported.standardError.contains("in use by another SoundFit"), "\(imported)")
            #expect((try? Data(contentsOf: directory.appendingPathComponent("state.json"))) == stateBefore)

            // The lock dies with its process, even after kill -9.
            first.kill9()
            let importAfter = try SoundFitCommandLine.run(["state", "import", exported.path, "--state-dir", directory.path])
            #expect(importAfter.succeeded, "import after the instance ended: \(importAfter.standardError)")
            let third = try SoundFitInstance(server: server, stateDirectory: directory, channels: 1)
            defer { third.stop() }
            #expect(try third.osc.query("/output/gain") == .float(-4))
        }
    }
}
