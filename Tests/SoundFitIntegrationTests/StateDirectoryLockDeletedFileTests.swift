import Foundation
import Glibc
import Testing

extension SoundFitIntegration.StateDirectoryLock {
    @Test("Deleting or replacing soundfit.lock does not let a second instance in: it exits 1 naming the directory; the first keeps running")
    func deletedLockFile() throws {
        try Rig.run(.stateful(channels: 1)) { rig in
            let first = try rig.soundfit
            expectApplied(try first.osc.set("/output/gain", .float(-3)), "/output/gain", .float(-3))
            let lockFile = rig.stateDirectory.appendingPathComponent("soundfit.lock")
            #expect(String(decoding: (try? Data(contentsOf: lockFile)) ?? Data(), as: UTF8.self) == "\(first.process.pid)\n")

            func startSecond(_ name: String) throws -> SoundFitCommandLine.Result {
                try SoundFitCommandLine.run([
                    "run", "--state-dir", rig.stateDirectory.path, "--osc-port", "0", "--http-port", "0", "--server", rig.server.name,
                    "--no-start-server", "--name", name,
                ])
            }
            try FileManager.default.removeItem(at: lockFile)
            let second = try startSecond("soundfit-second")
            #expect(second.status == 1 && !second.bySignal, "\(second.status) \(second.standardError)")
            #expect(second.standardError.contains("the state directory \(rig.stateDirectory.path) is in use by another SoundFit"), "\(second.standardError)")
            #expect(!second.standardOutput.contains("soundfit ready"))
            // A replaced file (another pid in it) changes nothing either.
            try Data("1\n".utf8).write(to: lockFile)
            let third = try startSecond("soundfit-third")
            #expect(third.status == 1 && third.standardError.contains("in use by another SoundFit"), "\(third.standardError)")

            // The first one still runs on its state, and nothing joined JACK beside it.
            #expect(first.process.isRunning)
            try first.osc.ping()
            #expect(try first.osc.query("/output/gain") == .float(-3))
            let ports = try JackTools.run("jack_lsp", server: rig.server.name)
            #expect(!ports.contains("soundfit-second") && !ports.contains("soundfit-third"), "\(ports)")

            // Once it has stopped, the directory is free again.
            rig.stopSoundFit()
            let next = try rig.start()
            #expect(try next.osc.query("/output/gain") == .float(-3))
        }
    }
}
