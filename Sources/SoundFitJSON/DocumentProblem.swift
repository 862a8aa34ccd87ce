/// One thing wrong with a JSON document: which file, where, which field, what.
///
/// `field` is a path into the document (`parameters./filter/cutoff`, `delivery.timeout_seconds`,
/// `left[2].db_hl`; see `JSONDocument`), nil when the problem is the document as a whole.
/// `location` is where the offending value starts in the text (for a missing field: the object
/// that lacks it), nil for values that come from code rather than a file. The description is
/// the line SoundFit prints or sends in an OSC `/error`:
/// `patches/02-lowpass-1k.json: line 12, column 22: parameters./filter/cutoff: 50000 is out of range 20…20000`.
public struct DocumentProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file as shown to the user (`patches/02-lowpass-1k.json`, or a full path); nil for a
    /// document that did not come from a file.
    public var file: String?
    public var location: JSONLocation?
    /// The field at fault, or nil for the whole document.
    public var field: String?
    /// What is wrong, as a sentence fragment.
    public var message: String

    public init(file: String?, location: JSONLocation? = nil, field: String?, message: String) {
        self.file = file
        self.location = location
        self.field = field
        self.message = message
    }

    /// Everything but the file: `line 12, column 22: parameters./filter/cutoff: 50000 is out of range 20…20000`.
    public var detail: String {
        (location.map { "\($0): " } ?? "") + (field.map { "\($0): " } ?? "") + message
    }

    public var description: String {
        if let file { "\(file): \(detail)" } else { detail }
    }
}

/// A document (state, patch, document settings, hearing profile, personalization preset) could
/// not be read; every problem found is listed.
public struct DocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// At least one problem.
    public var problems: [DocumentProblem]

    public init(_ problems: [DocumentProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
