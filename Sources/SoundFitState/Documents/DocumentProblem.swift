/// One thing wrong with a file: which file, which field, what.
///
/// `field` is a path into the JSON document: `parameters./filter/cutoff`, `number`,
/// `delivery.timeout_seconds`, `hearing_profile.left[0]`; nil when the problem is the file
/// itself (unreadable, not JSON). The description is the line SoundFit prints or sends in an
/// OSC `/error`:
/// `patches/02-lowpass-1k.json: parameters./filter/cutoff: 50000 is out of range 20…20000`.
public struct DocumentProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file as shown to the user (`patches/02-lowpass-1k.json`, or a full path).
    public var file: String
    /// The field at fault, or nil for the whole file.
    public var field: String?
    /// What is wrong, as a sentence fragment.
    public var message: String

    public init(file: String, field: String?, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { "\(file): \(field): \(message)" } else { "\(file): \(message)" }
    }
}

/// A document (patch, state, document settings) could not be read; every problem found is listed.
public struct DocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// At least one problem.
    public var problems: [DocumentProblem]

    public init(_ problems: [DocumentProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
