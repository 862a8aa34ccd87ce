import Foundation
import SoundFitModel
import SoundFitOSC
import Testing

/// docs/OSC.md is generated from the parameter registry and the command catalog; this keeps the
/// file in sync. Regenerate with `SOUNDFIT_WRITE_DOCS=1 swift test --filter OSCDocsFileTests`.
@Suite struct OSCDocsFileTests {
    private var expected: String {
        OSCDocumentation.markdown(parameters: ParameterModel.all,
                                  maximumPacketBytes: OSCControlSurface.maximumPacketBytes)
    }

    private var file: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/OSC.md")
    }

    @Test func docsFileMatchesTheRegistry() throws {
        if ProcessInfo.processInfo.environment["SOUNDFIT_WRITE_DOCS"] == "1" {
            try expected.write(to: file, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written == expected, "docs/OSC.md is out of date: run SOUNDFIT_WRITE_DOCS=1 swift test --filter OSCDocsFileTests")
    }

    @Test func everyCommandTheSurfaceAnswersIsDocumentedAndViceVersa() {
        // Reports SoundFit only sends are documented, never answered.
        let documented = Set(OSCCommandDescription.all.map(\.address))
            .subtracting(["/error", "/invalidated", "/test/state", "/test/result", "/test/no_response", "/test/masking_dilemma", "/meters/input"])
        #expect(documented == Set(OSCControlSurface.commandAddresses))
    }
}
