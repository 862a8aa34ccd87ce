import Foundation
import SoundFitJSON

/// An earphone's RETSPL table as JSON: the `--earphone` file.
extension EarphoneTable {
    /// Reads an earphone file:
    ///
    /// ```json
    /// {"name": "my-headphones", "retspl": [{"hz": 1000, "db_spl": 7}, {"hz": 4000, "db_spl": 9.5}]}
    /// ```
    ///
    /// Every problem names `file`, the line and column, and the field (`retspl[1].db_spl: …`).
    public static func decode(_ data: Data, file: String? = nil) throws(DocumentError) -> EarphoneTable {
        var reader = DocumentReader(file: file)
        guard let root = reader.parseObject(data) else { throw DocumentError(reader.problems) }
        reader.rejectUnknownKeys(root, known: ["name", "retspl"])
        let name = reader.string(root, "name")
        var entries: [(Double, Double)] = []
        if let elements = reader.array(root, "retspl", expecting: "an array of {\"hz\": …, \"db_spl\": …} entries") {
            for (index, element) in elements.enumerated() {
                let field = JSONDocument.path("retspl", index: index)
                guard case .object(let entry) = element else {
                    reader.fail(field, "expected an entry {\"hz\": …, \"db_spl\": …}, got \(element.summary)")
                    continue
                }
                let hz = reader.number(entry, "hz", in: 1...100_000, prefix: field + ".")
                let level = reader.number(entry, "db_spl", in: -20...120, prefix: field + ".")
                if let hz, let level { entries.append((hz, level)) }
            }
        }
        try reader.check()
        do {
            return try EarphoneTable(name: name ?? "", entries: entries)
        } catch {
            reader.fail("retspl", error.description)
            try reader.check()
            throw DocumentError(reader.problems)
        }
    }
}
