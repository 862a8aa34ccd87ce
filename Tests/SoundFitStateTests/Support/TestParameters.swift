import Foundation
import SoundFitModel
import SoundFitProcessing
import SoundFitState

/// The parameter model's address space: the session's entries, then the kernels'.
enum TestParameters {
    static let session: [ParameterDescriptor] = ParameterModel.session

    /// Every descriptor, in the runtime's order.
    static let descriptors = ParameterModel.all

    /// The addresses a patch must set.
    static let writableAddresses = descriptors.filter { $0.access == .readWrite }.map(\.address)

    /// Every writable parameter at its default.
    static var defaults: [String: ParameterValue] {
        Dictionary(uniqueKeysWithValues: descriptors.filter { $0.access == .readWrite }.map { ($0.address, $0.defaultValue) })
    }

    /// The defaults with some values changed.
    static func values(_ changes: [String: ParameterValue]) -> [String: ParameterValue] {
        defaults.merging(changes) { _, new in new }
    }
}

/// The repository's `patches/` directory.
let factoryPatchDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("patches", isDirectory: true)

/// A fresh directory under the system's temporary directory, removed with the value.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("soundfit-state-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A subdirectory, created.
    func subdirectory(_ name: String) throws -> URL {
        let sub = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        return sub
    }

    /// The names in `directory` (default: this one), sorted, hidden files included.
    func names(in directory: URL? = nil) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: (directory ?? url).path)) ?? []).sorted()
    }
}

extension URL {
    /// The file's content as text ("" if unreadable).
    var text: String { (try? String(contentsOf: self, encoding: .utf8)) ?? "" }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: self)
    }
}

/// Polls `condition` until it holds or `timeout` (real time) passes; for results produced on
/// other threads (the store's writer). Returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

/// State documents for the durable store's tests.
enum TestDocuments {
    /// The defaults of every parameter, fine-tuning at tech level 3.
    static func defaults() throws -> StateDocument {
        StateDocument.defaults(descriptors: TestParameters.descriptors, session: .fineTuning(techLevel: try TechLevel(3)))
    }

    /// The defaults with the output gain at `gain` dB: a distinct state per value.
    static func document(gain: Float) throws -> StateDocument {
        var document = try defaults()
        document.parameters["/output/gain"] = .float(gain)
        return document
    }
}
