import Foundation
import SoundFitJSON
import SoundFitModel
import Synchronization

/// Names a patch: by number, or by name (case-insensitive).
public enum PatchReference: Sendable, Equatable, CustomStringConvertible {
    case number(Int)
    case name(String)

    public var description: String {
        switch self {
        case .number(let number): "\(number)"
        case .name(let name): "'\(name)'"
        }
    }
}

/// Every patch SoundFit knows: the factory patches (read-only, number ≥ 0) and the user patches
/// (number < 0, saved in the state directory), with the rules for saving and deleting.
///
/// - List order: factory patches by number (0, 1, 2, …), then user patches newest number last
///   (−1, −2, …).
/// - Names are unique case-insensitively across factory and user patches. Saving under the
///   name of an existing user patch overwrites it and keeps its number; saving under a factory
///   patch's name is an error. (A user patch that an update's new factory patch happens to
///   share a name with still loads; its name then finds the factory patch, its number finds it.)
/// - A new user patch gets the number below the lowest user number on disk (−1, −2, …), so
///   numbers are not reused while a later patch exists. Broken user files keep their numbers.
/// - User patch files are read once, at `init`; the library is their only writer afterwards.
/// - User patches are bounded (`limits`): a new name is refused once `maximumCount` files
///   exist or its file would take the files past `maximumBytes` together; an existing name can
///   still be overwritten while the total stays within `maximumBytes` (or does not grow).
///
/// Thread rules: any thread except the audio thread; saving and deleting do blocking file I/O
/// (milliseconds) under the library's lock.
public final class PatchLibrary: Sendable {
    public let descriptors: [ParameterDescriptor]
    /// By number.
    public let factoryPatches: [Patch]
    public let userStore: UserPatchStore
    /// What was wrong with the patch files when the library was opened, to be logged at start.
    public let problems: [DocumentProblem]
    /// How many user patches, and how many bytes of them, the library keeps at most.
    public let limits: UserPatchLimits

    private struct UserPatches {
        var byNumber: [Int: Patch]
        /// Numbers held by `user-<n>.json` files, broken ones included.
        var occupied: Set<Int>
        /// The size of each `user-<n>.json` file, broken ones included.
        var fileSizes: [Int: Int]

        var totalBytes: Int { fileSizes.values.reduce(0, +) }
    }

    private let user: Mutex<UserPatches>

    /// Opens the library: loads the factory patches of `factoryDirectory` and the user patches
    /// of `userStore`. Never fails: broken files are in `problems`, the rest loads.
    public convenience init(factoryDirectory: URL, userStore: UserPatchStore, descriptors: [ParameterDescriptor],
                            limits: UserPatchLimits = UserPatchLimits()) {
        let factory = FactoryPatchLibrary.load(directory: factoryDirectory, descriptors: descriptors)
        self.init(factoryPatches: factory.patches, factoryProblems: factory.problems, userStore: userStore, descriptors: descriptors,
                  limits: limits)
    }

    /// Opens the library with factory patches already loaded (e.g. built into a test).
    public init(factoryPatches: [Patch], factoryProblems: [DocumentProblem] = [], userStore: UserPatchStore,
                descriptors: [ParameterDescriptor], limits: UserPatchLimits = UserPatchLimits()) {
        self.descriptors = descriptors
        self.limits = limits
        self.factoryPatches = factoryPatches.sorted { $0.number < $1.number }
        self.userStore = userStore
        let loaded = userStore.loadSized(descriptors: descriptors)
        var problems = factoryProblems + loaded.problems
        let factoryNames = Set(factoryPatches.map { PatchName.key($0.name) })
        var byNumber: [Int: Patch] = [:]
        var userNames: [String: Int] = [:]
        for patch in loaded.patches.sorted(by: { $0.number > $1.number }) {
            let file = userStore.url(for: patch.number).path
            if let other = userNames[PatchName.key(patch.name)] {
                problems.append(DocumentProblem(
                    file: file, field: "name", message: "'\(patch.name)' is already the name of user patch \(other); this file is not loaded"))
                continue
            }
            if factoryNames.contains(PatchName.key(patch.name)) {
                problems.append(DocumentProblem(
                    file: file, field: "name",
                    message: "'\(patch.name)' is also a factory patch's name: the name finds the factory patch; load this one by number (\(patch.number))"))
            }
            userNames[PatchName.key(patch.name)] = patch.number
            byNumber[patch.number] = patch
        }
        self.problems = problems
        user = Mutex(UserPatches(byNumber: byNumber, occupied: Set(loaded.fileSizes.keys), fileSizes: loaded.fileSizes))
    }

    /// Every patch: factory by number, then user patches −1, −2, ….
    public var patches: [Patch] {
        factoryPatches + user.withLock { $0.byNumber.values.sorted { $0.number > $1.number } }
    }

    /// How many `user-<n>.json` files there are (broken ones included) and their bytes together.
    public var userStorage: (count: Int, bytes: Int) {
        user.withLock { ($0.fileSizes.count, $0.totalBytes) }
    }

    /// The user patches, −1, −2, ….
    public var userPatches: [Patch] {
        user.withLock { $0.byNumber.values.sorted { $0.number > $1.number } }
    }

    /// The patch `reference` names; names are compared case-insensitively, factory first.
    public func patch(_ reference: PatchReference) throws(PatchError) -> Patch {
        switch reference {
        case .number(let number):
            if let patch = factoryPatches.first(where: { $0.number == number }) ?? user.withLock({ $0.byNumber[number] }) {
                return patch
            }
            throw .unknownNumber(number)
        case .name(let name):
            let key = PatchName.key(name)
            if let patch = factoryPatches.first(where: { PatchName.key($0.name) == key })
                ?? user.withLock({ $0.byNumber.values.first { PatchName.key($0.name) == key } }) {
                return patch
            }
            throw .unknownName(name)
        }
    }

    /// Saves `parameters` (every writable parameter, valid) as the user patch `name`.
    ///
    /// An existing user patch of that name (case-insensitively) is overwritten and keeps its
    /// number (the new spelling of the name is kept); otherwise the patch gets a new number
    /// (`newUserNumber`). The file is written atomically before the library changes. Refused
    /// past `limits` (see the type's rules).
    @discardableResult
    public func save(name: String, summary: String = "", parameters: [String: ParameterValue]) throws(PatchError) -> Patch {
        try PatchName.validate(name)
        let key = PatchName.key(name)
        if factoryPatches.contains(where: { PatchName.key($0.name) == key }) {
            throw .nameBelongsToFactoryPatch(name)
        }
        do {
            try ParameterCoding.validate(parameters, descriptors: descriptors, file: "patch '\(name)'")
        } catch {
            throw .invalidParameters(error)
        }
        let descriptors = self.descriptors
        let store = userStore
        let limits = self.limits
        return try user.withLock { (state: inout UserPatches) throws(PatchError) -> Patch in
            let existing = state.byNumber.values.first(where: { PatchName.key($0.name) == key })?.number
            if existing == nil, state.fileSizes.count >= limits.maximumCount {
                throw .tooManyUserPatches(name: name, limit: limits.maximumCount)
            }
            guard let number = existing ?? Self.newUserNumber(occupied: state.occupied) else {
                throw .storage("no user patch numbers left (delete some patches)")
            }
            let patch = Patch(number: number, name: name, summary: summary, parameters: parameters)
            let data = patch.encoded(descriptors: descriptors)
            let replaced = state.fileSizes[number] ?? 0
            let total = state.totalBytes - replaced + data.count
            if total > limits.maximumBytes, data.count > replaced {
                throw .userPatchesTooLarge(name: name, limit: limits.maximumBytes)
            }
            try store.write(data, of: patch)
            state.byNumber[number] = patch
            state.occupied.insert(number)
            state.fileSizes[number] = data.count
            return patch
        }
    }

    /// The lowest user patch number: `user-2147483647.json`. Patch numbers travel as OSC int32,
    /// and `Int32.min` means "no current patch" in `/patch/current`, so it is never a patch.
    public static let lowestUserNumber = -Int(Int32.max)

    /// The number for a new user patch: the one below the lowest in use, or — when that would
    /// pass `lowest` — the highest free number below zero, so every number handed out can be
    /// read back from its file name. Nil when every number is taken.
    static func newUserNumber(occupied: Set<Int>, lowest: Int = lowestUserNumber) -> Int? {
        let below = (occupied.min() ?? 0) - 1
        if below >= lowest { return below }
        var candidate = -1
        while candidate >= lowest {
            if !occupied.contains(candidate) { return candidate }
            candidate -= 1
        }
        return nil
    }

    /// The user patch `reference` names; a factory patch or an unknown one is refused (a surface
    /// checks this before performing anything of a bundle; `delete` checks again).
    public func patchToDelete(_ reference: PatchReference) throws(PatchError) -> Patch {
        let patch = try self.patch(reference)
        guard !patch.isFactory else { throw .factoryPatchIsReadOnly(number: patch.number, name: patch.name) }
        return patch
    }

    /// Deletes a user patch (its file is removed durably). Factory patches are read-only.
    @discardableResult
    public func delete(_ reference: PatchReference) throws(PatchError) -> Patch {
        let patch = try patchToDelete(reference)
        let store = userStore
        try user.withLock { (state: inout UserPatches) throws(PatchError) in
            guard state.byNumber[patch.number] != nil else { throw .unknownNumber(patch.number) }
            try store.remove(number: patch.number)
            state.byNumber[patch.number] = nil
            state.occupied.remove(patch.number)
            state.fileSizes[patch.number] = nil
        }
        return patch
    }
}
