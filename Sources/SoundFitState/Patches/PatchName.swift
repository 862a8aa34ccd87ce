import SoundFitJSON

/// The rules for patch names.
///
/// A name is 1…64 characters: letters (any script), digits 0–9, space and `- _ . ( ) '`; no
/// leading or trailing space; not only digits (it would read as a patch number); never a path
/// (no `/`, no `..`, no control characters). Names are unique case-insensitively across
/// factory and user patches (`PatchName.key`). Files are named by number, never by name, so a
/// name never reaches the file system; the rules keep names safe to show and type anyway.
public enum PatchName {
    public static let maximumLength = 64
    /// Bounds the bytes of a name whose characters carry many combining marks.
    public static let maximumUTF8Length = 256
    /// The punctuation allowed besides letters, digits and space.
    public static let punctuation: Set<Character> = ["-", "_", ".", "(", ")", "'"]

    /// Throws `PatchError.invalidName` with the rule broken.
    public static func validate(_ name: String) throws(PatchError) {
        if let problem = problem(name) { throw .invalidName(problem) }
    }

    /// The rule `name` breaks, as a sentence, or nil for a valid name.
    public static func problem(_ name: String) -> String? {
        let shown = "'\(NumberText.escapedForMessage(name, limit: 40))'"
        guard !name.isEmpty else { return "a patch name cannot be empty" }
        if let (offset, scalar) = name.unicodeScalars.enumerated().first(where: { $0.element.properties.generalCategory == .control }) {
            let code = String(scalar.value, radix: 16, uppercase: true)
            return "patch name \(shown) contains a control character (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) at position \(offset + 1))"
        }
        if name.contains("/") || name.contains("\\") {
            return "patch name \(shown) contains '\(name.contains("/") ? "/" : "\\")': a patch name is a name, never a path"
        }
        if name.contains("..") { return "patch name \(shown) contains '..': a patch name is a name, never a path" }
        if name.first == " " || name.last == " " { return "patch name \(shown) starts or ends with a space" }
        if let bad = name.first(where: { !isAllowed($0) }) {
            return "patch name \(shown) contains '\(NumberText.escapedForMessage(String(bad)))' (allowed: letters, digits, space and - _ . ( ) ')"
        }
        guard name.count <= maximumLength, name.utf8.count <= maximumUTF8Length else {
            return "patch name \(shown) is too long (\(name.count) characters; at most \(maximumLength))"
        }
        if Int(name) != nil || name.allSatisfy(\.isASCIIDigit) {
            return "patch name \(shown) is a number: it would read as a patch number"
        }
        return nil
    }

    /// The key names are compared by (case-insensitive).
    public static func key(_ name: String) -> String { name.lowercased() }

    private static func isAllowed(_ character: Character) -> Bool {
        character.isLetter || character.isASCIIDigit || character == " " || punctuation.contains(character)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
