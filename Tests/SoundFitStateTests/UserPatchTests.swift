import Foundation
import SoundFitModel
@testable import SoundFitState
import Testing

@Suite struct UserPatchTests {
    private let evening = TestParameters.values(["/filter/enabled": .bool(true), "/filter/cutoff": .float(2500)])
    private let morning = TestParameters.values(["/output/gain": .float(-6)])

    private func library(_ state: TemporaryDirectory) -> PatchLibrary {
        PatchLibrary(factoryDirectory: factoryPatchDirectory, userStore: UserPatchStore(stateDirectory: state.url),
                     descriptors: TestParameters.descriptors)
    }

    private func userFile(_ state: TemporaryDirectory, _ number: Int) -> URL {
        state.url.appendingPathComponent("patches").appendingPathComponent("user-\(-number).json")
    }

    @Test func savingAssignsNegativeNumbersAndWritesTheFile() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        #expect(library.problems.isEmpty)
        let first = try library.save(name: "Evening", parameters: evening)
        let second = try library.save(name: "Morning", parameters: morning)
        #expect(first.number == -1)
        #expect(second.number == -2)
        #expect(state.names(in: state.url.appendingPathComponent("patches")) == ["user-1.json", "user-2.json"])

        let text = userFile(state, -1).text
        #expect(text.contains("\"format\": \"soundfit.patch\""))
        #expect(text.contains("\"number\": -1,"))
        #expect(text.contains("\"name\": \"Evening\","))
        #expect(text.contains("\"/filter/cutoff\": 2500,"))
        let onDisk = try Patch.decode(Data(text.utf8), file: "user-1.json", descriptors: TestParameters.descriptors, completeness: .required)
        #expect(onDisk == first)

        #expect(library.patches.map(\.number) == [0, 1, 2, 3, 4, -1, -2])
        #expect(try library.patch(.number(-2)).parameters == morning)
        #expect(try library.patch(.name("EVENING")).number == -1)
    }

    @Test("A new patch never gets a number its file name cannot hold: after user-2147483647.json, a free one")
    func numbersNeverOverflow() throws {
        let state = try TemporaryDirectory()
        do {
            let library = library(state)
            try library.save(name: "Evening", parameters: evening)
            try library.save(name: "Morning", parameters: morning)
        }
        // A patch at the lowest number there is, as a user might copy one in.
        let lowest = PatchLibrary.lowestUserNumber
        #expect(lowest == -2147483647)
        let copied = userFile(state, -2).text.replacingOccurrences(of: "\"number\": -2,", with: "\"number\": \(lowest),")
            .replacingOccurrences(of: "\"Morning\"", with: "\"Copied\"")
        try Data(copied.utf8).write(to: userFile(state, lowest))
        let library = library(state)
        #expect(library.problems.isEmpty, "\(library.problems)")
        #expect(try library.patch(.name("Copied")).number == lowest)
        let next = try library.save(name: "Night", parameters: morning)
        #expect(next.number == -3, "a number below \(lowest) cannot be read back")
        let restarted = self.library(state)
        #expect(restarted.userPatches.map(\.number).sorted() == [lowest, -3, -2, -1])
        #expect(try restarted.patch(.number(-3)).name == "Night")
    }

    @Test func newNumbersFillGapsOnlyWhenTheRangeIsUsedUp() {
        #expect(PatchLibrary.newUserNumber(occupied: []) == -1)
        #expect(PatchLibrary.newUserNumber(occupied: [-1, -5]) == -6)
        #expect(PatchLibrary.newUserNumber(occupied: [-1, -3], lowest: -3) == -2)
        #expect(PatchLibrary.newUserNumber(occupied: [-1, -2, -3], lowest: -3) == nil)
    }

    @Test func savingAnExistingNameOverwritesAndKeepsTheNumber() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        try library.save(name: "Evening", parameters: evening)
        try library.save(name: "Morning", parameters: morning)
        let again = try library.save(name: "evening", parameters: morning)
        #expect(again.number == -1)
        #expect(again.name == "evening")
        #expect(library.userPatches.map(\.number) == [-1, -2])
        #expect(try library.patch(.number(-1)).parameters == morning)
        #expect(userFile(state, -1).text.contains("\"name\": \"evening\""))
        #expect(userFile(state, -1).text.contains("\"/output/gain\": -6"))
    }

    @Test func userPatchesSurviveARestart() throws {
        let state = try TemporaryDirectory()
        do {
            let library = library(state)
            try library.save(name: "Evening", summary: "for quiet rooms", parameters: evening)
            try library.save(name: "Morning", parameters: morning)
        }
        let reopened = library(state)
        #expect(reopened.problems.isEmpty)
        #expect(reopened.userPatches.map(\.name) == ["Evening", "Morning"])
        #expect(try reopened.patch(.name("Evening")).parameters == evening)
        #expect(try reopened.patch(.name("Evening")).summary == "for quiet rooms")
        #expect(try reopened.save(name: "Noon", parameters: evening).number == -3)
    }

    @Test func deletingRemovesTheFileAndNumbersAreNotReusedWhileLaterOnesExist() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        try library.save(name: "Evening", parameters: evening)
        try library.save(name: "Morning", parameters: morning)
        let deleted = try library.delete(.number(-1))
        #expect(deleted.name == "Evening")
        #expect(!FileManager.default.fileExists(atPath: userFile(state, -1).path))
        #expect(throws: PatchError.unknownNumber(-1)) { try library.patch(.number(-1)) }
        #expect(try library.save(name: "Noon", parameters: evening).number == -3)
        try library.delete(.name("noon"))
        try library.delete(.number(-2))
        #expect(library.userPatches.isEmpty)
        #expect(try library.save(name: "Fresh", parameters: evening).number == -1)
    }

    @Test func factoryPatchesAreReadOnly() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        let before = factoryPatchDirectory.appendingPathComponent("02-lowpass-1k.json").text
        #expect(throws: PatchError.factoryPatchIsReadOnly(number: 2, name: "Lowpass 1 kHz")) { try library.delete(.number(2)) }
        #expect(throws: PatchError.factoryPatchIsReadOnly(number: 0, name: "Transparent")) { try library.delete(.name("transparent")) }
        #expect(throws: PatchError.nameBelongsToFactoryPatch("TRANSPARENT")) { try library.save(name: "TRANSPARENT", parameters: evening) }
        #expect(factoryPatchDirectory.appendingPathComponent("02-lowpass-1k.json").text == before)
        #expect(library.patches.count == 5)
        #expect(PatchError.factoryPatchIsReadOnly(number: 2, name: "Lowpass 1 kHz").description
            == "patch 2 'Lowpass 1 kHz' is a factory patch: factory patches (number ≥ 0) are read-only")
    }

    @Test func unknownNumbersAndNamesAreErrors() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        #expect(throws: PatchError.unknownNumber(-7)) { try library.patch(.number(-7)) }
        #expect(throws: PatchError.unknownNumber(99)) { try library.patch(.number(99)) }
        #expect(throws: PatchError.unknownName("Nope")) { try library.patch(.name("Nope")) }
        #expect(throws: PatchError.unknownNumber(-7)) { try library.delete(.number(-7)) }
        #expect(throws: PatchError.unknownName("Nope")) { try library.delete(.name("Nope")) }
        #expect(PatchError.unknownNumber(-7).description == "no patch has number -7")
        #expect(PatchError.unknownName("Nope").description == "no patch is named 'Nope'")
    }

    @Test func badNamesAreRejectedAndNothingIsWritten() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        let cases: [(String, String)] = [
            ("", "cannot be empty"),
            (String(repeating: "a", count: 65), "is too long (65 characters; at most 64)"),
            ("../x", "contains '/': a patch name is a name, never a path"),
            ("a/b", "contains '/'"),
            ("..", "contains '..'"),
            ("a\\b", "contains '\\'"),
            ("a\nb", "contains a control character (U+000A at position 2)"),
            ("bell\u{7}", "contains a control character (U+0007 at position 5)"),
            ("tab\there", "control character (U+0009"),
            (" leading", "starts or ends with a space"),
            ("trailing ", "starts or ends with a space"),
            ("star*", "contains '*' (allowed: letters, digits, space and - _ . ( ) ')"),
            ("12", "is a number"),
            ("-3", "is a number"),
        ]
        for (name, fragment) in cases {
            do {
                try library.save(name: name, parameters: evening)
                Issue.record("'\(name)' was accepted")
            } catch {
                guard case .invalidName(let message) = error else {
                    Issue.record("'\(name)': \(error)")
                    continue
                }
                #expect(message.contains(fragment), "'\(name)': \(message)")
            }
        }
        #expect(library.userPatches.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: state.url.appendingPathComponent("patches").path))
    }

    @Test func goodNamesAreAccepted() throws {
        for name in ["a", "Evening (quiet)", "Müller's patch", "v1.2 - test_3", "Łódź", String(repeating: "x", count: 64), "12 o'clock"] {
            #expect(PatchName.problem(name) == nil, "\(name)")
        }
    }

    @Test func invalidParametersAreNotSaved() throws {
        let state = try TemporaryDirectory()
        let library = library(state)
        var incomplete = evening
        incomplete["/filter/q"] = nil
        #expect(throws: PatchError.self) { try library.save(name: "Incomplete", parameters: incomplete) }
        do {
            try library.save(name: "Loud", parameters: TestParameters.values(["/output/gain": .float(40)]))
            Issue.record("an out-of-range value was saved")
        } catch {
            #expect(error.description == "cannot save the patch: patch 'Loud': parameters./output/gain: 40 is out of range -60…12")
        }
        #expect(throws: PatchError.self) {
            try library.save(name: "Typed", parameters: TestParameters.values(["/filter/cutoff": .int(1000)]))
        }
        #expect(library.userPatches.isEmpty)
    }

    @Test func brokenUserFilesAreReportedAndKeepTheirNumbers() throws {
        let state = try TemporaryDirectory()
        do {
            let library = library(state)
            try library.save(name: "Evening", parameters: evening)
            try library.save(name: "Morning", parameters: morning)
        }
        try userFile(state, -1).write("{\"format\": \"soundfit.patch\", \"version\": 1, \"num")
        let reopened = library(state)
        #expect(reopened.userPatches.map(\.name) == ["Morning"])
        #expect(reopened.problems.count == 1)
        #expect(reopened.problems.first?.file == userFile(state, -1).path)
        #expect(reopened.problems.first?.description.contains(": line 1, column 44: invalid JSON: ") == true, "\(reopened.problems)")
        // The broken file's number is not handed out again, and the file is left for the user.
        #expect(try reopened.save(name: "Noon", parameters: evening).number == -3)
        #expect(userFile(state, -1).text.hasPrefix("{\"format\""))
    }

    @Test func aFileWhoseNumberDisagreesWithItsNameIsReported() throws {
        let state = try TemporaryDirectory()
        do {
            try library(state).save(name: "Evening", parameters: evening)
        }
        try FileManager.default.copyItem(at: userFile(state, -1), to: userFile(state, -5))
        let reopened = library(state)
        #expect(reopened.userPatches.map(\.number) == [-1])
        #expect(reopened.problems.map(\.description) == [
            "\(userFile(state, -5).path): number: -1 does not match the file name (user-5.json holds patch -5)",
        ])
    }

    @Test func fileNamesMapToNumbers() {
        #expect(UserPatchStore.fileName(for: -3) == "user-3.json")
        #expect(UserPatchStore.number(forFileName: "user-3.json") == -3)
        #expect(UserPatchStore.number(forFileName: "user-03.json") == nil)
        #expect(UserPatchStore.number(forFileName: "user-0.json") == nil)
        #expect(UserPatchStore.number(forFileName: "user--3.json") == nil)
        #expect(UserPatchStore.number(forFileName: ".user-3.json.tmp-1-2") == nil)
    }
}
