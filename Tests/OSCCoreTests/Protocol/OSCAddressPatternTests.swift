@testable import OSCCore
import Testing

/// OSC 1.0 address patterns: the spec's cases, `/` never crossed, malformed patterns named, and
/// crafted patterns bounded.
@Suite struct OSCAddressPatternTests {
    static func matches(_ pattern: String, _ address: String) throws -> Bool {
        try OSCAddressPattern(pattern).matches(address)
    }

    @Test("The spec's wildcards: ?, *, [abc], [a-z], [!…], {a,b}", arguments: [
        ("/filter/cutoff", "/filter/cutoff", true),
        ("/filter/cutof", "/filter/cutoff", false),
        ("/filter/cut?ff", "/filter/cutoff", true),
        ("/filter/?", "/filter/q", true),
        ("/filter/?", "/filter/qq", false),
        ("/filter/*", "/filter/cutoff", true),
        ("/filter/*", "/filter/", true),
        ("/*/enabled", "/ringmod/enabled", true),
        ("/*/enabled", "/filter/cutoff", false),
        ("/filter/c*f", "/filter/cutoff", true),
        ("/filter/c*f*", "/filter/cutoff", true),
        ("/filter/c**ff", "/filter/cutoff", true),
        ("/filter/*o*o*", "/filter/cutoff", false),
        ("/filter/[cq]*", "/filter/cutoff", true),
        ("/filter/[cq]*", "/filter/q", true),
        ("/filter/[cq]*", "/filter/gain", false),
        ("/filter/[a-d]utoff", "/filter/cutoff", true),
        ("/filter/[d-z]utoff", "/filter/cutoff", false),
        ("/filter/[!g]*", "/filter/cutoff", true),
        ("/filter/[!g]*", "/filter/gain", false),
        ("/filter/[!a-d]*", "/filter/cutoff", false),
        ("/filter/[-c]utoff", "/filter/cutoff", true),
        ("/filter/[c-]utoff", "/filter/-utoff", true),
        ("/filter/{cutoff,q}", "/filter/cutoff", true),
        ("/filter/{cutoff,q}", "/filter/q", true),
        ("/filter/{cutoff,q}", "/filter/gain", false),
        ("/{filter,ringmod}/enabled", "/ringmod/enabled", true),
        ("/{filter,ringmod}/{enabled,mix}", "/ringmod/mix", true),
        ("/filter/{cut,cutoff}", "/filter/cutoff", true),
        ("/filter/{cut,}off", "/filter/off", true),
        ("/filter/cutoff/*", "/filter/cutoff/normalized", true),
    ])
    func wildcards(pattern: String, address: String, expected: Bool) throws {
        #expect(try Self.matches(pattern, address) == expected, "\(pattern) against \(address)")
    }

    @Test("No wildcard crosses a /", arguments: [
        ("/*", "/filter/cutoff"),
        ("/filter*", "/filter/cutoff"),
        ("/filter?cutoff", "/filter/cutoff"),
        ("/filter/cutoff*", "/filter/cutoff/normalized"),
        ("/*/*", "/filter/cutoff/normalized"),
        ("/filter/*", "/filter/cutoff/normalized"),
    ])
    func slashIsNeverCrossed(pattern: String, address: String) throws {
        #expect(try !Self.matches(pattern, address))
    }

    @Test("Malformed patterns are refused with the problem and its position", arguments: [
        ("/filter/[cq", "'[' at position 8 is never closed"),
        ("/filter/{cutoff,q", "'{' at position 8 is never closed"),
        ("/filter/[]x", "'[]' at position 8 matches no character"),
        ("/filter/[!]x", "'[]' at position 8 matches no character"),
        ("/{filter/cutoff}", "'/' at position 8 inside [...] or {...}"),
        ("/filter/{a*,q}", "'*' at position 10 inside [...] or {...}"),
        ("/filter/[a{]", "'{' at position 10 inside [...] or {...}"),
    ])
    func malformed(pattern: String, problem: String) {
        #expect {
            _ = try OSCAddressPattern(pattern)
        } throws: { error in
            "\(error)".hasSuffix(problem) && "\(error)".hasPrefix("malformed address pattern")
        }
    }

    @Test("Which addresses are patterns: only those with * ? [ or { take the pattern path")
    func literalAddressesStayLiteral() {
        #expect(!OSCAddressPattern.isPattern("/filter/cutoff"))
        #expect(!OSCAddressPattern.isPattern("/filter/cutoff/normalized"))
        #expect(!OSCAddressPattern.isPattern("/odd]name}"))
        for pattern in ["/filter/*", "/filter/cut?ff", "/filter/[cq]", "/{a,b}"] {
            #expect(OSCAddressPattern.isPattern(pattern), "\(pattern)")
        }
    }

    @Test("/list's subtree: a pattern matches an address or one of its containers")
    func containers() throws {
        let filter = try OSCAddressPattern("/filter")
        #expect(try filter.matchesAddressOrContainer(of: "/filter/cutoff"))
        #expect(try !filter.matchesAddressOrContainer(of: "/ringmod/mix"))
        #expect(try OSCAddressPattern("/*").matchesAddressOrContainer(of: "/ringmod/mix"))
        #expect(try !OSCAddressPattern("/fil").matchesAddressOrContainer(of: "/filter/cutoff"))
    }

    @Test("A crafted pattern that would backtrack for long is refused, quickly")
    func backtrackingIsBounded() throws {
        let pattern = try OSCAddressPattern("/" + String(repeating: "*a", count: 40) + "b")
        let address = "/" + String(repeating: "a", count: 60)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(throws: OSCAddressPattern.Problem.tooComplex) { try pattern.matches(address) }
        }
        #expect(elapsed < .milliseconds(100), "took \(elapsed)")
    }
}
