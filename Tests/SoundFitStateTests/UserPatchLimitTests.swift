import Foundation
import SoundFitModel
@testable import SoundFitState
import Testing

/// User patches are bounded by count and bytes (`UserPatchLimits`): new names are refused past
/// either bound, overwriting an existing name keeps working, and the bounds count what is on disk.
@Suite struct UserPatchLimitTests {
    private let values = TestParameters.values(["/filter/cutoff": .float(2500)])

    private func library(_ state: TemporaryDirectory, _ limits: UserPatchLimits) -> PatchLibrary {
        PatchLibrary(factoryPatches: [], userStore: UserPatchStore(stateDirectory: state.url),
                     descriptors: TestParameters.descriptors, limits: limits)
    }

    /// The files in `<state>/patches` and their bytes together, as the disk has them.
    private func onDisk(_ state: TemporaryDirectory) -> (count: Int, bytes: Int) {
        let directory = state.url.appendingPathComponent("patches")
        let names = state.names(in: directory).filter { $0.hasPrefix("user-") }
        let bytes = names.reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size] as? NSNumber)?.intValue ?? 0)
        }
        return (names.count, bytes)
    }

    @Test func defaultsAreAThousandPatchesAndSixteenMebibytes() {
        #expect(UserPatchLimits() == UserPatchLimits(maximumCount: 1000, maximumBytes: 16 * 1024 * 1024))
        let state = try? TemporaryDirectory()
        #expect(state.map { library($0, UserPatchLimits()).limits.maximumCount } == 1000)
    }

    @Test("Past the count bound a new name is refused with the flag to raise it; overwriting still works")
    func countBound() throws {
        let state = try TemporaryDirectory()
        let library = library(state, UserPatchLimits(maximumCount: 5, maximumBytes: 1 << 20))
        for index in 1...5 { try library.save(name: "P\(index)", parameters: values) }
        #expect(throws: PatchError.tooManyUserPatches(name: "P6", limit: 5)) { try library.save(name: "P6", parameters: values) }
        let message = PatchError.tooManyUserPatches(name: "P6", limit: 5).description
        #expect(message == "cannot save patch 'P6': at most 5 user patches (--max-user-patches); delete some")
        #expect(onDisk(state).count == 5)
        // The same name, another spelling: an overwrite, at the bound.
        let overwritten = try library.save(name: "p3", parameters: TestParameters.values(["/filter/cutoff": .float(900)]))
        #expect(overwritten.number == -3)
        #expect(onDisk(state).count == 5)
        // Deleting makes room again.
        try library.delete(.number(-1))
        #expect(try library.save(name: "P6", parameters: values).number == -6)
        #expect(onDisk(state).count == 5 && library.userStorage.count == 5)
    }

    @Test("Past the byte bound a new name is refused; the files never take more than the bound")
    func byteBound() throws {
        let state = try TemporaryDirectory()
        let one = Patch(number: -1, name: "P01", parameters: values).encoded(descriptors: TestParameters.descriptors).count
        let bound = one * 3 + one / 2
        let library = library(state, UserPatchLimits(maximumCount: 1000, maximumBytes: bound))
        var saved = 0
        var refusal: PatchError?
        for index in 1...10 {
            do {
                try library.save(name: String(format: "P%02d", index), parameters: values)
                saved += 1
            } catch {
                refusal = error
                break
            }
        }
        #expect(saved == 3)
        #expect(refusal == .userPatchesTooLarge(name: "P04", limit: bound))
        #expect(refusal?.description.contains("(--max-user-patch-bytes); delete some") == true, "\(String(describing: refusal))")
        let disk = onDisk(state)
        #expect(disk.count == 3 && disk.bytes <= bound && disk.bytes == library.userStorage.bytes, "\(disk) bound \(bound)")
        // An overwrite that does not grow the files works at the bound.
        try library.save(name: "P02", parameters: values)
        #expect(onDisk(state) == disk)
    }

    @Test("Files already on disk count: a library opened over the bound loads them all and refuses new ones")
    func existingFilesCount() throws {
        let state = try TemporaryDirectory()
        do {
            let wide = library(state, UserPatchLimits(maximumCount: 10, maximumBytes: 1 << 20))
            for index in 1...4 { try wide.save(name: "P\(index)", parameters: values) }
        }
        // A broken file is on the disk too.
        try state.url.appendingPathComponent("patches/user-9.json").write("not json")
        let narrow = library(state, UserPatchLimits(maximumCount: 3, maximumBytes: 1 << 20))
        #expect(narrow.userPatches.count == 4)
        #expect(narrow.userStorage.count == 5)
        #expect(throws: PatchError.tooManyUserPatches(name: "New", limit: 3)) { try narrow.save(name: "New", parameters: values) }
        try narrow.save(name: "P2", parameters: values)
    }
}
