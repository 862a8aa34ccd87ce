import Foundation
import SoundFitJSON
import Testing

@Suite struct JSONParserTests {
    private func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try JSONParser.parse(Data(text.utf8))
    }

    private func error(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func valuesKeepTheirOrderAndLiterals() throws {
        let value = try parse(#"{"b": 0.7071, "a": [true, false, null, -1.5e-3, "x\n\"y\" \u00e9\ud83d\ude00"], "c": {}}"#)
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == .number("0.7071"))
        #expect(object["a"] == .array([.bool(true), .bool(false), .null, .number("-1.5e-3"), .string("x\n\"y\" é😀")]))
        #expect(object["c"] == .object(JSONObject()))
    }

    @Test func writingAndParsingRoundTrips() throws {
        let value = JSONValue.object(JSONObject([
            "text": .string("tab\t quote\" backslash\\ bell\u{7} ünïcödé 😀"),
            "numbers": .array([.number(Float(0.7071)), .number(Float(1000)), .number(Float(-24)), .number(1e-5 as Float)]),
            "nested": .object(JSONObject(["empty": .array([]), "list": .array([.object(JSONObject(["k": .null]))])])),
        ]))
        #expect(try JSONParser.parse(value.fileData()) == value)
        #expect(try JSONParser.parse(value.compactData()) == value)
        #expect(String(decoding: value.fileData(), as: UTF8.self).contains(#""numbers": [0.7071, 1000, -24, 1e-05]"#))
    }

    @Test func floatsSurviveTheirTextForm() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let value = Float.random(in: 20...20000, using: &generator)
            let text = NumberText.format(value)
            #expect(Float(Double(text)!) == value, "\(value) written as \(text)")
        }
    }

    /// OSCQuery clients infer `int` from `1600`, so a float is written `1600.0`.
    @Test func floatNumbersAlwaysReadAsFloats() throws {
        let floats: [Float] = [1600, -60, 0, 20000, 0.7071, 1e7, 1e8, 1.5e-5, -24]
        let texts = floats.map { JSONValue.floatNumber($0) }
        #expect(texts == [.number("1600.0"), .number("-60.0"), .number("0.0"), .number("20000.0"), .number("0.7071"),
                          .number("10000000.0"), .number("1e+08"), .number("1.5e-05"), .number("-24.0")])
        let written = String(decoding: JSONValue.array(texts).compactData(), as: UTF8.self)
        #expect(written == "[1600.0,-60.0,0.0,20000.0,0.7071,10000000.0,1e+08,1.5e-05,-24.0]")
        #expect(try parse(written) == .array(texts))
        #expect(texts.map { $0.double.map(Float.init) } == floats.map { $0 }, "each reads back as the same Float")
        #expect(JSONValue.floatNumber(.infinity) == .null && JSONValue.floatNumber(.nan) == .null)
        #expect(JSONValue.number(Float(1600)) == .number("1600"), "files keep their integral form")
    }

    @Test func strictnessCatchesHandEditingMistakes() {
        #expect(error("{\"a\": 1,}") == "invalid JSON at line 1, column 9: trailing comma before '}'")
        #expect(error("[1, 2,]") == "invalid JSON at line 1, column 7: trailing comma before ']'")
        #expect(error("{\"a\": 1 // note\n}") == "invalid JSON at line 1, column 9: expected ',' or '}'")
        #expect(error("// note\n{}") == "invalid JSON at line 1, column 1: comments are not allowed in JSON")
        #expect(error("{\"a\": 1, \"a\": 2}") == "invalid JSON at line 1, column 10: duplicate key \"a\"")
        #expect(error("{a: 1}") == "invalid JSON at line 1, column 2: expected a key in double quotes")
        #expect(error("{\"a\": 'x'}") == "invalid JSON at line 1, column 7: expected a value (object, array, string, number, true, false or null)")
        #expect(error("{\"a\": True}") == "invalid JSON at line 1, column 7: expected a value (object, array, string, number, true, false or null)")
        #expect(error("{\"a\": tru}") == "invalid JSON at line 1, column 7: invalid literal (expected true, false or null; strings need double quotes)")
        #expect(error("[01]") == "invalid JSON at line 1, column 2: invalid number: leading zeros are not allowed")
        #expect(error("[1.]") == "invalid JSON at line 1, column 2: invalid number: expected a digit after '.'")
        #expect(error("[.5]") == "invalid JSON at line 1, column 2: expected a value (object, array, string, number, true, false or null)")
        #expect(error("[NaN]") == "invalid JSON at line 1, column 2: expected a value (object, array, string, number, true, false or null)")
        #expect(error("[1e]") == "invalid JSON at line 1, column 2: invalid number: expected a digit in the exponent")
        #expect(error("[\"a\tb\"]") == "invalid JSON at line 1, column 4: control character in a string (write it as \\u0009)")
        #expect(error("[\"ab\ncd\"]") == "invalid JSON at line 1, column 5: unterminated string (line break inside a string)")
        #expect(error("[\"\\x\"]") == "invalid JSON at line 1, column 3: invalid escape sequence in a string")
        #expect(error("[\"\\ud83d\"]") == "invalid JSON at line 1, column 3: unpaired UTF-16 surrogate \\uD83D")
        #expect(error("{} {}") == "invalid JSON at line 1, column 4: unexpected text after the end of the document")
        #expect(error("   ") == "invalid JSON at line 1, column 4: the file is empty (expected a JSON value)")
        #expect(error("{\n  \"é\": [1,\n  2") == "invalid JSON at line 3, column 4: unexpected end of the file (the file is truncated?)")
        #expect(error("{\"a\": \"never closed") == "invalid JSON at line 1, column 7: unterminated string (the file is truncated?)")
    }

    @Test func invalidUTF8IsRejectedAndAByteOrderMarkSkipped() throws {
        var bytes = Array("[\"".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\"]".utf8)
        do {
            _ = try JSONParser.parse(Data(bytes))
            Issue.record("invalid UTF-8 accepted")
        } catch {
            #expect(error.message == "the string is not valid UTF-8")
        }
        #expect(try JSONParser.parse(Data([0xEF, 0xBB, 0xBF] + Array("[1]".utf8))) == .array([.number("1")]))
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(error(deep) == "invalid JSON at line 1, column 65: nesting deeper than 64 levels")
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(error(fine) == nil)
    }
}

/// Compatible strictness: what Foundation's `JSONDecoder` accepted, for files SoundFit read with
/// it before (hearing profiles).
@Suite struct CompatibleJSONParserTests {
    private func compatible(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        try JSONParser.parse(data, strictness: .compatible)
    }

    @Test func trailingCommasAreAccepted() throws {
        #expect(try compatible(Data(#"{"a": [1, 2,], "b": {},}"#.utf8))
            == .object(JSONObject(["a": .array([.number("1"), .number("2")]), "b": .object(JSONObject())])))
        #expect(throws: JSONSyntaxError.self) { try compatible(Data("[1,,]".utf8)) }
        #expect(throws: JSONSyntaxError.self) { try compatible(Data("[,]".utf8)) }
    }

    @Test func theFirstOfARepeatedKeyCounts() throws {
        let document = try JSONParser.parseDocument(Data("{\"a\": 1,\n \"a\": [2]}".utf8), strictness: .compatible)
        #expect(document.root == .object(JSONObject(["a": .number("1")])))
        #expect(document.location(of: "a") == JSONLocation(line: 1, column: 7))
        #expect(document.location(of: "a[0]") == JSONLocation(line: 1, column: 7), "the repeated value is not located")
    }

    @Test func utf16TextIsRead() throws {
        let text = "{\"é\": [1]}"
        let expected = JSONValue.object(JSONObject(["é": .array([.number("1")])]))
        for encoding in [String.Encoding.utf16, .utf16LittleEndian, .utf16BigEndian] {
            #expect(try compatible(text.data(using: encoding)!) == expected, "\(encoding)")
            #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text.data(using: encoding)!) }
        }
    }

    @Test func nestingMayBeDeeper() throws {
        let deep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try compatible(Data(deep.utf8)) }
        #expect(throws: JSONSyntaxError.self) { try compatible(Data(("[" + deep + "]").utf8)) }
    }

    @Test func everythingElseIsAsStrict() {
        for text in ["{\"a\": 1 // c\n}", "[01]", "[.5]", "[NaN]", "{'a': 1}", "{a: 1}", "{} {}", "", "[\"a\tb\"]"] {
            #expect(throws: JSONSyntaxError.self, "\(text)") { try compatible(Data(text.utf8)) }
        }
    }
}
