import Foundation
import SoundFitModel
@testable import SoundFitState
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
