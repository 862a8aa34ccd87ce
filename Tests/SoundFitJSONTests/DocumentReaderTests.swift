import Foundation
import SoundFitJSON
import Testing

/// Locations and problems: every problem names the file, the line and column, and the field.
@Suite struct DocumentReaderTests {
    private let text = """
        {
          "name": "Évening",
          "points": [{"hz": 500, "db_hl": 35}, {"hz": 1000, "db_hl": "40"}],
          "nested": {"empty": {}}
        }
        """

    @Test func everyValueHasALocationByFieldPath() throws {
        let document = try JSONParser.parseDocument(Data(text.utf8))
        #expect(document.location(of: "") == JSONLocation(line: 1, column: 1))
        #expect(document.location(of: "name") == JSONLocation(line: 2, column: 11))
        #expect(document.location(of: "points") == JSONLocation(line: 3, column: 13))
        #expect(document.location(of: "points[0]") == JSONLocation(line: 3, column: 14))
        #expect(document.location(of: "points[1].db_hl") == JSONLocation(line: 3, column: 62))
        #expect(document.location(of: "nested.empty") == JSONLocation(line: 4, column: 23))
        // A missing member: where the object that lacks it starts.
        #expect(document.location(of: "nested.empty.value") == JSONLocation(line: 4, column: 23))
        #expect(document.location(of: "points[7].hz") == JSONLocation(line: 3, column: 13))
        #expect(document.root == (try JSONParser.parse(Data(text.utf8))))
    }

    @Test func columnsCountCharactersNotBytes() throws {
        let document = try JSONParser.parseDocument(Data(#"{"é😀": "ü", "b": 1}"#.utf8))
        #expect(document.location(of: "é😀") == JSONLocation(line: 1, column: 8))
        #expect(document.location(of: "b") == JSONLocation(line: 1, column: 18))
    }

    @Test func aSchemaProblemNamesFileLineColumnAndField() throws {
        var reader = DocumentReader(file: "profile.json")
        let parsed = reader.parseObject(Data(text.utf8))
        guard let root = parsed, case .array(let points)? = root["points"], case .object(let second) = points[1] else {
            Issue.record("no points")
            return
        }
        _ = reader.number(second, "db_hl", prefix: "points[1].")
        _ = reader.string(root, "missing", prefix: "")
        #expect(reader.problems.map(\.description) == [
            #"profile.json: line 3, column 62: points[1].db_hl: expected a number, got "40""#,
            "profile.json: line 1, column 1: missing: missing (expected a string)",
        ])
        #expect(reader.problems.first?.location == JSONLocation(line: 3, column: 62))
        #expect(reader.problems.first?.field == "points[1].db_hl")
        #expect(throws: DocumentError.self) { try reader.check() }
    }

    @Test func aSyntaxErrorNamesFileLineAndColumn() {
        var reader = DocumentReader(file: "state.json")
        #expect(reader.parse(Data("{\n  \"a\": 1,\n}".utf8)) == nil)
        #expect(reader.problems.map(\.description) == ["state.json: line 3, column 1: invalid JSON: trailing comma before '}'"])
        #expect(reader.problems.first?.location == JSONLocation(line: 3, column: 1))
    }

    @Test func valuesFromCodeHaveNoLocationAndDataNoFile() throws {
        var reader = DocumentReader(file: nil)
        reader.fail("parameters./output/gain", "40 is out of range -60…12")
        reader.fail(nil, "expected a JSON object, got an array")
        #expect(reader.problems.map(\.description) == [
            "parameters./output/gain: 40 is out of range -60…12", "expected a JSON object, got an array",
        ])
    }

    @Test func anObjectIsExpected() {
        var reader = DocumentReader(file: "x.json")
        #expect(reader.parseObject(Data("[1]".utf8)) == nil)
        #expect(reader.problems.map(\.description) == ["x.json: expected a JSON object, got an array"])
    }
}
