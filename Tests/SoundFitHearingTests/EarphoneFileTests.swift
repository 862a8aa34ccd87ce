import Foundation
import SoundFitHearing
import SoundFitJSON
import Testing

/// The `--earphone` file: a RETSPL table read with file, line, column and field in every problem.
@Suite struct EarphoneFileTests {
    @Test func aTableIsReadAndInterpolated() throws {
        let table = try EarphoneTable.decode(Data("""
            {"name": "mine", "retspl": [{"hz": 1000, "db_spl": 7}, {"hz": 4000, "db_spl": 11}]}
            """.utf8), file: "mine.json")
        #expect(table.name == "mine")
        #expect(table.retspl(at: 1000) == 7 && abs(table.retspl(at: 2000) - 9) < 1e-9 && table.retspl(at: 8000) == 11)
    }

    @Test func problemsNameTheField() {
        for (text, field) in [
            (#"{"name": "x", "retspl": [{"hz": 1000, "db_spl": 200}]}"#, "retspl[0].db_spl"),
            (#"{"name": "x", "retspl": [{"hz": 1000}]}"#, "retspl[0].db_spl"),
            (#"{"name": "x", "retspl": []}"#, "retspl"),
            (#"{"retspl": [{"hz": 1000, "db_spl": 7}]}"#, "name"),
            (#"{"name": "x", "retspl": [{"hz": 1000, "db_spl": 7}], "extra": 1}"#, "extra"),
        ] {
            do {
                _ = try EarphoneTable.decode(Data(text.utf8), file: "e.json")
                Issue.record("accepted \(text)")
            } catch {
                #expect("\(error)".contains("e.json") && "\(error)".contains(field), "\(text): \(error)")
            }
        }
    }
}
