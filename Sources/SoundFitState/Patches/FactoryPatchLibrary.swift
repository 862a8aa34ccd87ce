import Foundation
import SoundFitJSON
import SoundFitModel

/// The factory patches: the `*.json` files of a directory (`patches/` in the repository).
public enum FactoryPatchLibrary {
    /// Loads every `*.json` file of `directory` (other files are ignored) as a factory patch.
    ///
    /// A file that cannot be used is reported with its name and the field at fault, and the
    /// others load. Factory patches must set every writable parameter of `descriptors`, have a
    /// number ≥ 0 and a valid name; a number or name (case-insensitively) already used by a
    /// file earlier in name order is a problem of the later file, which is not loaded.
    /// Files are shown as `<directory name>/<file name>` (`patches/02-lowpass-1k.json`).
    ///
    /// - Returns: the patches by number, and the problems found. A missing or unreadable
    ///   directory is one problem and no patches.
    public static func load(directory: URL, descriptors: [ParameterDescriptor]) -> (patches: [Patch], problems: [DocumentProblem]) {
        let label = directory.lastPathComponent
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            return ([], [DocumentProblem(file: directory.path, field: nil,
                                         message: "cannot read the factory patch directory: \((error as NSError).localizedDescription)")])
        }
        var patches: [Patch] = []
        var problems: [DocumentProblem] = []
        var fileByNumber: [Int: String] = [:]
        var fileByName: [String: String] = [:]
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let file = "\(label)/\(name)"
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                problems.append(DocumentProblem(file: file, field: nil, message: "cannot read the file"))
                continue
            }
            let patch: Patch
            do {
                patch = try Patch.decode(data, file: file, descriptors: descriptors, completeness: .required)
            } catch {
                problems += error.problems
                continue
            }
            guard patch.number >= 0 else {
                problems.append(DocumentProblem(
                    file: file, field: "number",
                    message: "\(patch.number) is not a factory patch number (factory patches have numbers ≥ 0, user patches < 0)"))
                continue
            }
            if let other = fileByNumber[patch.number] {
                problems.append(DocumentProblem(file: file, field: "number", message: "\(patch.number) is already used by \(other)"))
                continue
            }
            if let other = fileByName[PatchName.key(patch.name)] {
                problems.append(DocumentProblem(file: file, field: "name", message: "'\(patch.name)' is already used by \(other)"))
                continue
            }
            fileByNumber[patch.number] = file
            fileByName[PatchName.key(patch.name)] = file
            patches.append(patch)
        }
        return (patches.sorted { $0.number < $1.number }, problems)
    }
}
