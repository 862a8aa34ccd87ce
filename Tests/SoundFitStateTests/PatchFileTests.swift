import Foundation
import SoundFitJSON
import SoundFitModel
import SoundFitState
import Testing

/// Broken patch files: each problem names the file and the field at fault; the other files load.
@Suite struct PatchFileTests {
    /// The Lowpass 1 kHz file with `edit` applied to its text.
    private func lowpassText(_ edit: (String) -> String = { $0 }) throws -> String {
        edit(factoryPatchDirectory.appendingPathComponent("02-lowpass-1k.json").text)
    }

    /// A `patches/` directory with the good Lowpass file and `files`; the library's result.
    private func load(_ files: [String: String]) throws -> (patches: [Patch], problems: [DocumentProblem], directory: TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let patches = try directory.subdirectory("patches")
        try patches.appendingPathComponent("02-lowpass-1k.json").write(try lowpassText())
        for (name, text) in files {
            try patches.appendingPathComponent(name).write(text)
        }
        let result = FactoryPatchLibrary.load(directory: patches, descriptors: TestParameters.descriptors)
        return (result.patches, result.problems, directory)
    }

    /// A broken file `05-bad.json` with the Lowpass text edited (and its number and name made
    /// unique): its problems, after checking that the good file still loaded.
    private func problems(_ edit: @escaping (String) -> String) throws -> [String] {
        let text = try lowpassText {
            edit($0.replacingOccurrences(of: "\"number\": 2,", with: "\"number\": 5,")
                .replacingOccurrences(of: "\"Lowpass 1 kHz\"", with: "\"Broken\""))
        }
        let result = try load(["05-bad.json": text])
        #expect(result.patches.map(\.name) == ["Lowpass 1 kHz"], "the good file loads")
        return result.problems.map(\.description)
    }

    /// A broken field of `05-bad.json`: the text edits that break it (in order) and the problems
    /// reported, each naming the file, line, column and field.
    struct BrokenField: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let edits: [(String, String)]
        let expected: [String]
    }

    static let brokenFields: [BrokenField] = [
        BrokenField(testDescription: "an out-of-range value", edits: [("\"/filter/cutoff\": 1000", "\"/filter/cutoff\": 50000")],
                    expected: ["patches/05-bad.json: line 13, column 23: parameters./filter/cutoff: 50000 is out of range 20…20000"]),
        BrokenField(testDescription: "an unknown address", edits: [("\"/filter/gain\": 0,", "\"/filter/gain\": 0,\n    \"/filter/resonance\": 3,")],
                    expected: ["patches/05-bad.json: line 16, column 26: parameters./filter/resonance: unknown parameter address"]),
        BrokenField(testDescription: "a missing parameter", edits: [("    \"/filter/q\": 0.7071,\n", "")],
                    expected: ["patches/05-bad.json: line 7, column 17: parameters./filter/q: missing (every writable parameter must be set)"]),
        BrokenField(testDescription: "wrong types", edits: [
            ("\"/filter/enabled\": true", "\"/filter/enabled\": 1"),
            ("\"/filter/cutoff\": 1000", "\"/filter/cutoff\": \"1000\""),
            ("\"/filter/type\": \"lowpass\"", "\"/filter/type\": \"lowpas\""),
        ], expected: [
            "patches/05-bad.json: line 11, column 24: parameters./filter/enabled: expected true or false, got 1",
            "patches/05-bad.json: line 12, column 21: parameters./filter/type: \"lowpas\" is not one of lowpass, highpass, bandpass, notch, peak, lowshelf, highshelf, allpass",
            "patches/05-bad.json: line 13, column 23: parameters./filter/cutoff: expected a number (20…20000), got \"1000\"",
        ]),
        BrokenField(testDescription: "a read-only parameter", edits: [("\"parameters\": {", "\"parameters\": {\n    \"/processing/fitting\": 3,")],
                    expected: ["patches/05-bad.json: line 8, column 28: parameters./processing/fitting: is read-only: it cannot be set, so it does not belong in parameters"]),
        BrokenField(testDescription: "header fields", edits: [
            ("\"soundfit.patch\"", "\"soundfit.preset\""),
            ("\"version\": 1", "\"version\": 2"),
            ("\"number\": 5", "\"number\": 5.5"),
            ("\"Broken\"", "\"../etc/passwd\""),
            ("\"description\"", "\"descripton\""),
        ], expected: [
            "patches/05-bad.json: line 2, column 13: format: expected \"soundfit.patch\", got \"soundfit.preset\"",
            "patches/05-bad.json: line 3, column 14: version: 2 is not supported (this SoundFit reads version 1)",
            "patches/05-bad.json: line 6, column 17: descripton: unknown field (known fields: format, version, number, name, description, parameters)",
            "patches/05-bad.json: line 4, column 13: number: 5.5 is not an integer",
            "patches/05-bad.json: line 5, column 11: name: patch name '../etc/passwd' contains '/': a patch name is a name, never a path",
        ]),
        BrokenField(testDescription: "a negative factory number", edits: [("\"number\": 5", "\"number\": -5")],
                    expected: ["patches/05-bad.json: number: -5 is not a factory patch number (factory patches have numbers ≥ 0, user patches < 0)"]),
    ]

    @Test("A broken field is named with the file and the field", arguments: brokenFields)
    func brokenFieldIsNamed(_ field: BrokenField) throws {
        let found = try problems { text in
            field.edits.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
        }
        #expect(found == field.expected)
    }

    @Test func badJSONGivesTheLineAndColumn() throws {
        let truncated = try problems { String($0.prefix(200)) }
        #expect(truncated.count == 1)
        #expect(truncated.first?.hasPrefix("patches/05-bad.json: line ") == true && truncated.first?.contains(", column ") == true && truncated.first?.contains(": invalid JSON: ") == true, "\(truncated)")
        #expect(truncated.first?.contains("truncated") == true, "\(truncated)")

        let trailingComma = try problems { $0.replacingOccurrences(of: "\"/output/gain\": 0", with: "\"/output/gain\": 0,") }
        #expect(trailingComma == ["patches/05-bad.json: line 21, column 3: invalid JSON: trailing comma before '}'"])

        let duplicate = try problems { $0.replacingOccurrences(of: "\"/filter/gain\": 0,", with: "\"/filter/gain\": 0,\n    \"/filter/cutoff\": 2000,") }
        #expect(duplicate == ["patches/05-bad.json: line 16, column 5: invalid JSON: duplicate key \"/filter/cutoff\""])

        let notAnObject = try problems { _ in "[1, 2]" }
        #expect(notAnObject == ["patches/05-bad.json: expected a JSON object, got an array"])

        let empty = try problems { _ in "" }
        #expect(empty == ["patches/05-bad.json: line 1, column 1: invalid JSON: the file is empty (expected a JSON value)"])
    }

    @Test func duplicateNumbersAndNamesAreReportedForTheLaterFile() throws {
        let sameNumber = try lowpassText { $0.replacingOccurrences(of: "\"Lowpass 1 kHz\"", with: "\"Other\"") }
        let sameName = try lowpassText { $0.replacingOccurrences(of: "\"number\": 2,", with: "\"number\": 7,").replacingOccurrences(of: "Lowpass 1 kHz", with: "LOWPASS 1 KHZ") }
        let result = try load(["03-same-number.json": sameNumber, "04-same-name.json": sameName])
        #expect(result.patches.map(\.number) == [2])
        #expect(result.problems.map(\.description) == [
            "patches/03-same-number.json: number: 2 is already used by patches/02-lowpass-1k.json",
            "patches/04-same-name.json: name: 'LOWPASS 1 KHZ' is already used by patches/02-lowpass-1k.json",
        ])
    }

    @Test func severalBrokenFilesAreEachReportedAndTheRestLoad() throws {
        let transparent = factoryPatchDirectory.appendingPathComponent("00-transparent.json").text
        let result = try load([
            "00-transparent.json": transparent,
            "10-bad-json.json": "{\"format\": \"soundfit.patch\",",
            "11-out-of-range.json": try lowpassText {
                $0.replacingOccurrences(of: "\"number\": 2", with: "\"number\": 11")
                    .replacingOccurrences(of: "Lowpass 1 kHz", with: "Eleven")
                    .replacingOccurrences(of: "\"/ringmod/frequency\": 22", with: "\"/ringmod/frequency\": 50")
            },
            "README.md": "not a patch",
        ])
        #expect(result.patches.map(\.name) == ["Transparent", "Lowpass 1 kHz"])
        #expect(result.problems.map(\.file) == ["patches/10-bad-json.json", "patches/11-out-of-range.json"])
        #expect(result.problems.last?.field == "parameters./ringmod/frequency")
        #expect(result.problems.last?.message == "50 is out of range 15…40")
    }

    @Test func aMissingDirectoryIsOneProblem() throws {
        let directory = try TemporaryDirectory()
        let result = FactoryPatchLibrary.load(directory: directory.url.appendingPathComponent("nowhere"), descriptors: TestParameters.descriptors)
        #expect(result.patches.isEmpty)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.description.contains("cannot read the factory patch directory") == true)
    }

    @Test func aUserPatchFileMayLackParametersAddedLater() throws {
        let text = try lowpassText {
            $0.replacingOccurrences(of: "\"number\": 2", with: "\"number\": -1")
                .replacingOccurrences(of: "    \"/output/enabled\": true,\n", with: "")
        }
        let patch = try Patch.decode(Data(text.utf8), file: "user-1.json", descriptors: TestParameters.descriptors,
                                     completeness: .defaultsForMissing)
        #expect(patch.parameters["/output/enabled"] == .bool(true))
        #expect(patch.parameters.count == TestParameters.writableAddresses.count)
        #expect(throws: DocumentError.self) {
            try Patch.decode(Data(text.utf8), file: "user-1.json", descriptors: TestParameters.descriptors, completeness: .required)
        }
    }
}
