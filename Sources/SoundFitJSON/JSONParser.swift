import Foundation

/// A JSON syntax error: where it was found and what is wrong.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: JSONLocation
    public var message: String

    public init(location: JSONLocation, message: String) {
        self.location = location
        self.message = message
    }

    public var line: Int { location.line }
    public var column: Int { location.column }

    /// `invalid JSON at line 3, column 5: expected ',' or '}'`.
    public var description: String { "invalid JSON at \(location): \(message)" }
}

/// A strict RFC 8259 parser for SoundFit's files.
///
/// Strict where a lenient parser would hide a mistake in a hand-edited file: duplicate keys,
/// trailing commas, comments, invalid UTF-8, raw control characters in strings and anything
/// after the top-level value are errors. A UTF-8 byte order mark is skipped. Nesting is limited
/// (`Strictness.maximumDepth`), so a hostile file cannot exhaust the stack.
///
/// Pure and synchronous; safe on any thread.
public struct JSONParser {
    /// How strictly a document is read.
    public enum Strictness: Sendable {
        /// SoundFit's own files (state, patches, document settings): RFC 8259 and no more.
        case strict
        /// Files other tools write and SoundFit read with Foundation's `JSONDecoder` before
        /// (hearing profiles): also what it accepted: a trailing comma in an array or object,
        /// a key given twice (the first counts), UTF-16 text, nesting up to 512 levels.
        case compatible

        /// The deepest nesting accepted.
        public var maximumDepth: Int {
            switch self {
            case .strict: 64
            case .compatible: 512
            }
        }
    }

    private let strictness: Strictness

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// Where each value starts, by field path; nil when not asked for (`parse`).
    private var locations: [String: JSONLocation]?
    /// The line of `index`, kept up to date by `skipWhitespace` (the only place a line break is
    /// valid), so a location costs no rescan of the file.
    private var line = 1
    /// The last column computed on `line`, and its byte offset (columns are counted on from it).
    private var columnCache = (offset: 0, column: 1)

    /// Parses one JSON document.
    public static func parse(_ data: Data, strictness: Strictness = .strict) throws(JSONSyntaxError) -> JSONValue {
        var parser = try JSONParser(data: data, strictness: strictness, recordsLocations: false)
        return try parser.document()
    }

    /// Parses one JSON document and records where each of its values starts, so that a reader
    /// can point at the value it rejects.
    public static func parseDocument(_ data: Data, strictness: Strictness = .strict) throws(JSONSyntaxError) -> JSONDocument {
        var parser = try JSONParser(data: data, strictness: strictness, recordsLocations: true)
        let root = try parser.document()
        return JSONDocument(root: root, locations: parser.locations ?? [:])
    }

    private init(data: Data, strictness: Strictness, recordsLocations: Bool) throws(JSONSyntaxError) {
        self.strictness = strictness
        locations = recordsLocations ? [:] : nil
        bytes = strictness == .compatible ? try Self.utf8(fromUTF16: data) ?? Array(data) : Array(data)
    }

    /// The UTF-8 of `data` if it is UTF-16 text (a byte order mark, or a zero byte next to the
    /// first character, as `JSONDecoder` detects it); nil for anything else.
    private static func utf8(fromUTF16 data: Data) throws(JSONSyntaxError) -> [UInt8]? {
        let bytes = Array(data.prefix(2))
        guard bytes.count == 2 else { return nil }
        let encoding: String.Encoding
        switch (bytes[0], bytes[1]) {
        case (0xFE, 0xFF), (0xFF, 0xFE): encoding = .utf16
        case (0, let second) where second != 0: encoding = .utf16BigEndian
        case (let first, 0) where first != 0: encoding = .utf16LittleEndian
        default: return nil
        }
        guard let text = String(data: data, encoding: encoding) else {
            throw JSONSyntaxError(location: JSONLocation(line: 1, column: 1), message: "the file is not valid UTF-16 (nor UTF-8)")
        }
        return Array(text.utf8)
    }

    private mutating func document() throws(JSONSyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        columnCache = (index, 1)
        skipWhitespace()
        guard index < bytes.count else { throw error("the file is empty (expected a JSON value)") }
        let value = try self.value(at: "")
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the end of the document") }
        return value
    }

    /// The value at `index`, whose field path is `path` (`""` for the root, `left[2].db_hl`).
    private mutating func value(at path: String) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of the file (the file is truncated?)") }
        if locations != nil {
            let location = currentLocation()
            locations?[path] = location
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(at: path)
        case UInt8(ascii: "["): return try array(at: path)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case UInt8(ascii: "/"): throw error("comments are not allowed in JSON")
        default: throw error("expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func object(at path: String) throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var object = JSONObject()
        var seen = Set<String>()
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else {
                throw error(peek(UInt8(ascii: "}")) ? "trailing comma before '}'" : "expected a key in double quotes")
            }
            let keyStart = index
            let key = try string()
            let isRepeated = !seen.insert(key).inserted
            if isRepeated, strictness == .strict {
                throw error("duplicate key \"\(NumberText.escapedForMessage(key))\"", at: keyStart)
            }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw error("expected ':' after the key") }
            index += 1
            skipWhitespace()
            if isRepeated {
                // Compatible: the first value counts; this one is only checked (and not located).
                let recorded = locations
                locations = nil
                _ = try value(at: "")
                locations = recorded
            } else {
                let memberPath = locations == nil ? "" : JSONDocument.path(path, key: key)
                object.members.append(.init(key: key, value: try value(at: memberPath)))
            }
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                skipWhitespace()
                if strictness == .compatible, peek(UInt8(ascii: "}")) { break }
                continue
            }
            guard peek(UInt8(ascii: "}")) else { throw error(atEnd ? "unexpected end of the file (the file is truncated?)" : "expected ',' or '}'") }
            break
        }
        index += 1
        depth -= 1
        return .object(object)
    }

    private mutating func array(at path: String) throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if peek(UInt8(ascii: "]")) { throw error("trailing comma before ']'") }
            let elementPath = locations == nil ? "" : JSONDocument.path(path, index: elements.count)
            elements.append(try value(at: elementPath))
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                skipWhitespace()
                if strictness == .compatible, peek(UInt8(ascii: "]")) { break }
                continue
            }
            guard peek(UInt8(ascii: "]")) else { throw error(atEnd ? "unexpected end of the file (the file is truncated?)" : "expected ',' or ']'") }
            break
        }
        index += 1
        depth -= 1
        return .array(elements)
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = index
        while true {
            guard index < bytes.count else { throw error("unterminated string (the file is truncated?)", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                try appendRun(runStart..<index, to: &scalars)
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(scalars)
                }
                scalars.append(try escape())
                runStart = index
                continue
            }
            if byte < 0x20 {
                throw error(byte == 0x0A
                    ? "unterminated string (line break inside a string)"
                    : "control character in a string (write it as \\u\(hex4(UInt32(byte))))")
            }
            index += 1
        }
    }

    /// Appends the unescaped bytes `range` of a string, which must be valid UTF-8.
    private func appendRun(_ range: Range<Int>, to scalars: inout String.UnicodeScalarView) throws(JSONSyntaxError) {
        guard !range.isEmpty else { return }
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw error("the string is not valid UTF-8", at: range.lowerBound)
        }
        scalars.append(contentsOf: text.unicodeScalars)
    }

    /// Parses an escape sequence starting at the backslash.
    private mutating func escape() throws(JSONSyntaxError) -> Unicode.Scalar {
        let start = index
        index += 1
        guard index < bytes.count else { throw error("unterminated string (the file is truncated?)") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hexQuad(escapeStart: start)
            if (0xD800...0xDBFF).contains(high) {
                guard bytes.count >= index + 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired UTF-16 surrogate \\u\(hex4(high))", at: start)
                }
                index += 2
                let low = try hexQuad(escapeStart: start)
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired UTF-16 surrogate \\u\(hex4(high))", at: start) }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("unpaired UTF-16 surrogate \\u\(hex4(high))", at: start) }
            return scalar
        default:
            throw error("invalid escape sequence in a string", at: start)
        }
    }

    private mutating func hexQuad(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape", at: escapeStart) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape (expected four hexadecimal digits)", at: escapeStart)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func number() throws(JSONSyntaxError) -> String {
        let numberStart = index
        // A number cut off by the end of the file is a truncation, reported at the end.
        var errorPosition: Int { index >= bytes.count ? bytes.count : numberStart }
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit", at: errorPosition) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("invalid number: leading zeros are not allowed", at: errorPosition) }
        } else {
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit after '.'", at: errorPosition) }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit in the exponent", at: errorPosition) }
            skipDigits()
        }
        if index < bytes.count, isIdentifierByte(bytes[index]) { throw error("invalid number", at: errorPosition) }
        return String(decoding: bytes[numberStart..<index], as: UTF8.self)
    }

    private mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let expected = Array(word.utf8)
        if bytes.count - index < expected.count, expected.starts(with: bytes[index...]) {
            throw error("unexpected end of the file", at: bytes.count)
        }
        guard bytes.count >= index + expected.count, Array(bytes[index..<index + expected.count]) == expected,
              index + expected.count == bytes.count || !isIdentifierByte(bytes[index + expected.count]) else {
            throw error(bytes[index] == UInt8(ascii: "t") || bytes[index] == UInt8(ascii: "f") || bytes[index] == UInt8(ascii: "n")
                ? "invalid literal (expected true, false or null; strings need double quotes)"
                : "expected a value")
        }
        index += expected.count
    }

    // MARK: Helpers

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= strictness.maximumDepth else { throw error("nesting deeper than \(strictness.maximumDepth) levels") }
    }

    private var atEnd: Bool { index >= bytes.count }

    private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x0A:
                index += 1
                line += 1
                columnCache = (index, 1)
            case 0x20, 0x09, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The line and column of `index` (the parser only moves forward, so the column is counted
    /// on from the last one computed).
    private mutating func currentLocation() -> JSONLocation {
        columnCache.column = bytes[columnCache.offset..<index].reduce(columnCache.column) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        columnCache.offset = index
        return JSONLocation(line: line, column: columnCache.column)
    }

    private func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// An error at `position` (default: the current index), with its line and column.
    /// Anything missing at the end of a non-empty file is reported as a truncation.
    private func error(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        let position = min(position ?? index, bytes.count)
        let truncation = "unexpected end of the file (the file is truncated?)"
        let message = position == bytes.count && !message.hasPrefix("the file is empty") && !message.contains("truncated")
            ? truncation : message
        var line = 1
        var lineStart = 0
        for offset in 0..<position where bytes[offset] == 0x0A {
            line += 1
            lineStart = offset + 1
        }
        // Columns count characters, not bytes: continuation bytes of multi-byte UTF-8 are skipped.
        let column = bytes[lineStart..<position].reduce(1) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        return JSONSyntaxError(location: JSONLocation(line: line, column: column), message: message)
    }
}
