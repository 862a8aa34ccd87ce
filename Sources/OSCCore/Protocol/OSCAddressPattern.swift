// Why not liblo: lo_pattern_match has no step bound and cannot say why a pattern is malformed.
/// An OSC 1.0 address pattern: `?` (any one character), `*` (any run of characters), `[abc]`,
/// `[a-z]`, `[!…]` (one character of, or not of, a set), `{foo,bar}` (one of the literal
/// strings). None of them crosses a `/`: a pattern selects addresses part by part.
///
/// Built once per received message, then matched against the candidate addresses (SoundFit's
/// parameters). Matching works on the UTF-8 bytes of both, allocates nothing, and is bounded:
/// a pattern that needs more than `maximumSteps` steps against one address is refused rather
/// than let a crafted packet (`/*a*a*a*a…`) hold the receive thread.
///
/// Thread rules: a value; any thread.
public struct OSCAddressPattern: Sendable {
    /// Why a pattern cannot be used: answered with `/error ,s pattern ,s reason`.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case unclosed(Character, position: Int)
        case emptySet(position: Int)
        case nested(Character, position: Int)
        case tooComplex

        public var description: String {
            switch self {
            case .unclosed(let opening, let position):
                "malformed address pattern: '\(opening)' at position \(position) is never closed"
            case .emptySet(let position):
                "malformed address pattern: '[]' at position \(position) matches no character"
            case .nested(let character, let position):
                "malformed address pattern: '\(character)' at position \(position) inside [...] or {...}"
            case .tooComplex:
                "address pattern too complex: more than \(OSCAddressPattern.maximumSteps) steps to match one address"
            }
        }
    }

    /// Backtracking steps allowed per address matched.
    public static let maximumSteps = 10_000

    public let text: String
    /// How many parts (`/`) the addresses it matches have: nothing in a pattern matches a `/`,
    /// so an address with another count is never a match.
    public let partCount: Int
    private let bytes: [UInt8]
    /// For each `[` and `{`, the position of its closing bracket; unused elsewhere.
    private let closing: [Int]

    /// Whether `address` uses any pattern character. Addresses that do not are looked up as
    /// they are (the fast path); only the others are built into a pattern.
    public static func isPattern(_ address: String) -> Bool {
        address.utf8.contains { byte in
            byte == .asterisk || byte == .question || byte == .openBracket || byte == .openBrace
        }
    }

    public init(_ text: String) throws(Problem) {
        self.text = text
        bytes = Array(text.utf8)
        partCount = Self.partCount(of: text)
        var closing = [Int](repeating: 0, count: bytes.count)
        var position = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == .openBracket || byte == .openBrace {
                let close: UInt8 = byte == .openBracket ? .closeBracket : .closeBrace
                var end = position + 1
                // In a set, `!` may come first and `]` is never a member (it closes the set).
                while end < bytes.count, bytes[end] != close {
                    let inner = bytes[end]
                    if inner == .slash || inner == .openBracket || inner == .openBrace || inner == .asterisk
                        || inner == .question || (byte == .openBracket && inner == .closeBrace)
                        || (byte == .openBrace && inner == .closeBracket) {
                        throw .nested(Character(Unicode.Scalar(inner)), position: end)
                    }
                    end += 1
                }
                guard end < bytes.count else { throw .unclosed(Character(Unicode.Scalar(byte)), position: position) }
                if byte == .openBracket {
                    let first = bytes[position + 1] == .exclamation ? position + 2 : position + 1
                    guard first < end else { throw .emptySet(position: position) }
                }
                closing[position] = end
                position = end + 1
            } else {
                position += 1
            }
        }
        self.closing = closing
    }

    /// The number of parts (`/`) of `address`.
    public static func partCount(of address: String) -> Int {
        address.utf8.reduce(0) { $1 == .slash ? $0 + 1 : $0 }
    }

    /// Whether `address` matches the whole pattern. Throws `.tooComplex` when it takes more
    /// than `maximumSteps` steps.
    public func matches(_ address: String) throws(Problem) -> Bool {
        guard Self.partCount(of: address) == partCount else { return false }
        var steps = 0
        let result = address.utf8.withContiguousStorageIfAvailable { candidate in
            bytes.withUnsafeBufferPointer { pattern in
                match(pattern, 0, candidate, 0, &steps)
            }
        } ?? Array(address.utf8).withUnsafeBufferPointer { candidate in
            bytes.withUnsafeBufferPointer { pattern in match(pattern, 0, candidate, 0, &steps) }
        }
        guard steps <= Self.maximumSteps else { throw .tooComplex }
        return result
    }

    /// Whether the pattern matches `address` or one of its containers (`/filter` for
    /// `/filter/cutoff`): how `/list` selects a subtree.
    public func matchesAddressOrContainer(of address: String) throws(Problem) -> Bool {
        if try matches(address) { return true }
        var container = Substring(address)
        while let slash = container.lastIndex(of: "/"), slash > container.startIndex {
            container = container[..<slash]
            if try matches(String(container)) { return true }
        }
        return false
    }

    /// Matches `pattern[p...]` against `candidate[a...]`; `steps` counts the work (once over the
    /// limit, everything fails fast).
    private func match(_ pattern: UnsafeBufferPointer<UInt8>, _ p: Int, _ candidate: UnsafeBufferPointer<UInt8>,
                       _ a: Int, _ steps: inout Int) -> Bool {
        var p = p, a = a
        while p < pattern.count {
            steps += 1
            guard steps <= Self.maximumSteps else { return false }
            switch pattern[p] {
            case .asterisk:
                while p < pattern.count, pattern[p] == .asterisk { p += 1 }
                // Any run within this part of the address: try the longest last, shortest first.
                var end = a
                while true {
                    if match(pattern, p, candidate, end, &steps) { return true }
                    guard end < candidate.count, candidate[end] != .slash, steps <= Self.maximumSteps else { return false }
                    end += 1
                }
            case .question:
                guard a < candidate.count, candidate[a] != .slash else { return false }
                p += 1
                a += 1
            case .openBracket:
                guard a < candidate.count, candidate[a] != .slash,
                      setContains(pattern, from: p + 1, to: closing[p], candidate[a]) else { return false }
                p = closing[p] + 1
                a += 1
            case .openBrace:
                let end = closing[p]
                var start = p + 1
                while start <= end {
                    var stop = start
                    while stop < end, pattern[stop] != .comma { stop += 1 }
                    let length = stop - start
                    if a + length <= candidate.count,
                       (0..<length).allSatisfy({ pattern[start + $0] == candidate[a + $0] }),
                       match(pattern, end + 1, candidate, a + length, &steps) {
                        return true
                    }
                    start = stop + 1
                }
                return false
            case let literal:
                guard a < candidate.count, candidate[a] == literal else { return false }
                p += 1
                a += 1
            }
        }
        return a == candidate.count
    }

    /// Whether the set `pattern[start..<end]` (`!` first negates; `x-y` is a range; a `-` first
    /// or last is itself) holds `byte`.
    private func setContains(_ pattern: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, _ byte: UInt8) -> Bool {
        var position = start
        let negated = pattern[position] == .exclamation
        if negated { position += 1 }
        var found = false
        while position < end {
            if position + 2 < end, pattern[position + 1] == .hyphen {
                let low = pattern[position], high = pattern[position + 2]
                if min(low, high) <= byte && byte <= max(low, high) { found = true }
                position += 3
            } else {
                if pattern[position] == byte { found = true }
                position += 1
            }
        }
        return found != negated
    }
}

private extension UInt8 {
    static let asterisk = UInt8(ascii: "*")
    static let question = UInt8(ascii: "?")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let exclamation = UInt8(ascii: "!")
    static let hyphen = UInt8(ascii: "-")
    static let comma = UInt8(ascii: ",")
    static let slash = UInt8(ascii: "/")
}
