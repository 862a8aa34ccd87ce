import Foundation
import SoundFit
import Testing

/// `/nsm/client/open` paths become state directories only when absolute and normalized: a
/// relative path or a `..` would put the state outside the session's tree.
@Suite struct NSMOpenPathTests {
    private func directory(_ path: String) throws(NSMRefusal) -> String {
        try NSMOpen(path: path, displayName: "SoundFit", clientID: "SoundFit.nA").stateDirectory().path
    }

    @Test func absolutePathsAreKeptWithRepeatedAndTrailingSlashesDropped() throws {
        #expect(try directory("/home/me/NSM Sessions/song/SoundFit.nA") == "/home/me/NSM Sessions/song/SoundFit.nA")
        #expect(try directory("/home//me/song/SoundFit.nA/") == "/home/me/song/SoundFit.nA")
        // Dots inside a name are a name.
        #expect(try directory("/home/me/..song../SoundFit.nA") == "/home/me/..song../SoundFit.nA")
    }

    @Test("Relative, dotted and root paths are refused with ERR_CREATE_FAILED and a message saying why")
    func badPathsAreRefused() {
        for (path, hint) in [("song/SoundFit.nA", "relative"), ("", "relative"), ("./SoundFit.nA", "relative"),
                             ("/home/me/../../etc/SoundFit.nA", "'..'"), ("/home/me/song/..", "'..'"),
                             ("/home/./me/SoundFit.nA", "'.'"), ("/", "root"), ("//", "root")] {
            do {
                let accepted = try directory(path)
                Issue.record("'\(path)' was accepted as \(accepted)")
            } catch {
                #expect(error.code == .createFailed && error.code.rawValue == -10, "\(path): \(error)")
                #expect(error.description.contains(hint), "\(path): \(error.description)")
            }
        }
    }

    @Test func errorCodesAreTheProtocols() {
        #expect(NSMClient.ErrorCode.general.rawValue == -1)
        #expect(NSMClient.ErrorCode.badProject.rawValue == -9)
        #expect(NSMClient.ErrorCode.sessionLocked.rawValue == -11)
    }
}
