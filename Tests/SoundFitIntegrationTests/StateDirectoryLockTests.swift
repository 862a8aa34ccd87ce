import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// One SoundFit per state directory: a second instance and `state import` are refused while
    /// one runs, with a message that says why; the lock goes with the process, also after kill -9.
    @Suite("State directory lock") struct StateDirectoryLock {
        @Test("A second instance on the same state directory exits non-zero and changes nothing")
        func secondInstanceRefused() throws {
            try Rig.run(.stateful(channels: 1)) { rig in
                let first = try rig.soundfit
                expectApplied(try first.osc.set("/output/gain", .float(-4)), "/output/gain", .float(-4))
                waitUntilSaved(rig.stateDirectory, "/output/gain", -4)

                let second = try SoundFitCommandLine.run([
                    "run", "--state-dir", rig.stateDirectory.path, "--osc-port", "0", "--http-port", "0", "--server", rig.server.name, "--no-start-server",
                    "--name", "soundfit-second",
                ])
                #expect(!second.succeeded, "a second instance started on the same state directory")
                #expect(second.standardError.contains("in use by another SoundFit") && second.standardError.contains("pid \(first.process.pid)"),
                        "\(second.standardError)")
                #expect(!second.standardOutput.contains("soundfit ready"))
                #expect(try first.osc.query("/output/gain") == .float(-4))

                // `state import` is refused too, and the state stays the first instance's.
                let exported = rig.stateDirectory.deletingLastPathComponent().appendingPathComponent("\(rig.stateDirectory.lastPathComponent)-export.json")
                defer { try? FileManager.default.removeItem(at: exported) }
                let export = try SoundFitCommandLine.run(["state", "export", "--state-dir", rig.stateDirectory.path, "--output", exported.path])
                #expect(export.succeeded, "export (read-only) must work while SoundFit runs: \(export.standardError)")
                let stateBefore = try? Data(contentsOf: rig.stateDirectory.appendingPathComponent("state.json"))
                let imported = try SoundFitCommandLine.run(["state", "import", exported.path, "--state-dir", rig.stateDirectory.path])
                #expect(!imported.succeeded && imported.standardError.contains("in use by another SoundFit"), "\(imported)")
                #expect((try? Data(contentsOf: rig.stateDirectory.appendingPathComponent("state.json"))) == stateBefore)

                // The lock dies with its process, even after kill -9.
                rig.killSoundFit()
                let importAfter = try SoundFitCommandLine.run(["state", "import", exported.path, "--state-dir", rig.stateDirectory.path])
                #expect(importAfter.succeeded, "import after the instance ended: \(importAfter.standardError)")
                let third = try rig.start()
                #expect(try third.osc.query("/output/gain") == .float(-4))
            }
        }
    }
}
