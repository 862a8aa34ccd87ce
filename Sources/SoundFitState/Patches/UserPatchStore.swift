import Foundation
import SoundFitJSON
import SoundFitModel

/// User patches on disk: one file per patch, `<state directory>/patches/user-<n>.json` for patch
/// number −n, in the patch file format (`Patch`). Files are written atomically (`AtomicFile`),
/// so a crash never leaves a partial patch.
///
/// The store only reads and writes files; `PatchLibrary` owns the rules (names, numbers).
/// Thread rules: blocking file I/O; call from control tasks, one writer at a time (the library
/// serializes).
public struct UserPatchStore: Sendable {
    /// `<state directory>/patches`.
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// The store of a state directory: `<state directory>/patches`.
    public init(stateDirectory: URL) {
        self.init(directory: stateDirectory.appendingPathComponent("patches", isDirectory: true))
    }

    /// `user-3.json` for patch −3.
    public static func fileName(for number: Int) -> String { "user-\(-number).json" }

    /// The patch number a file name stands for (`user-3.json` → −3), or nil for other files.
    public static func number(forFileName name: String) -> Int? {
        guard name.hasPrefix("user-"), name.hasSuffix(".json") else { return nil }
        let digits = name.dropFirst(5).dropLast(5)
        guard !digits.isEmpty, digits.count <= 10, digits.first != "0", digits.allSatisfy(\.isASCII),
              let magnitude = Int(digits), magnitude >= 1, magnitude <= Int(Int32.max) else { return nil }
        return -magnitude
    }

    /// The file of patch `number`.
    public func url(for number: Int) -> URL { directory.appendingPathComponent(Self.fileName(for: number)) }

    /// Reads every user patch file. Missing parameters take their defaults (a patch saved by an
    /// older SoundFit still loads); anything else wrong is a problem naming the file and field,
    /// and that file is skipped (it stays on disk). A missing directory means no user patches.
    ///
    /// - Returns: the patches, the problems, and every number a `user-<n>.json` file occupies
    ///   (also the broken ones, so a new patch never takes a broken file's number) with the
    ///   file's size in bytes.
    public func load(descriptors: [ParameterDescriptor]) -> (patches: [Patch], problems: [DocumentProblem], occupiedNumbers: Set<Int>) {
        let loaded = loadSized(descriptors: descriptors)
        return (loaded.patches, loaded.problems, Set(loaded.fileSizes.keys))
    }

    /// `load`, with the size of every `user-<n>.json` file by number.
    public func loadSized(descriptors: [ParameterDescriptor]) -> (patches: [Patch], problems: [DocumentProblem], fileSizes: [Int: Int]) {
        guard FileManager.default.fileExists(atPath: directory.path) else { return ([], [], [:]) }
        AtomicFile.removeTemporaries(in: directory)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            return ([], [DocumentProblem(file: directory.path, field: nil,
                                         message: "cannot read the user patch directory: \((error as NSError).localizedDescription)")], [:])
        }
        var patches: [Patch] = []
        var problems: [DocumentProblem] = []
        var sizes: [Int: Int] = [:]
        for name in names.sorted() {
            guard let number = Self.number(forFileName: name) else { continue }
            let url = directory.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
            sizes[number] = size
            guard let data = FileManager.default.contents(atPath: url.path) else {
                problems.append(DocumentProblem(file: url.path, field: nil, message: "cannot read the file"))
                continue
            }
            sizes[number] = data.count
            do {
                let patch = try Patch.decode(data, file: url.path, descriptors: descriptors, completeness: .defaultsForMissing)
                guard patch.number == number else {
                    problems.append(DocumentProblem(
                        file: url.path, field: "number",
                        message: "\(patch.number) does not match the file name (\(name) holds patch \(number))"))
                    continue
                }
                patches.append(patch)
            } catch {
                problems += error.problems
            }
        }
        return (patches, problems, sizes)
    }

    /// Writes `patch` (number < 0) atomically, creating the directory if needed.
    public func write(_ patch: Patch, descriptors: [ParameterDescriptor]) throws(PatchError) {
        try write(patch.encoded(descriptors: descriptors), of: patch)
    }

    /// Writes `data`, `patch` encoded, atomically, creating the directory if needed.
    public func write(_ data: Data, of patch: Patch) throws(PatchError) {
        precondition(patch.number < 0, "user patches have numbers < 0")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .storage("cannot create the user patch directory \(directory.path): \((error as NSError).localizedDescription)")
        }
        do {
            try AtomicFile.write(data, to: url(for: patch.number))
        } catch {
            throw .storage("cannot save patch \(patch.number) '\(patch.name)': \(error.message)")
        }
    }

    /// Removes patch `number`'s file durably.
    public func remove(number: Int) throws(PatchError) {
        do {
            try AtomicFile.remove(url(for: number))
        } catch {
            throw .storage("cannot delete patch \(number): \(error.message)")
        }
    }
}
