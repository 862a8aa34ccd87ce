import Foundation
import SoundFitHearing
import SoundFitJSON

/// The calibration you can do, as document state: the earphone table in use and the per-ear,
/// per-frequency corrections a meter measured. Kept per instance in the state directory
/// (`calibration.json`, written atomically on every change), so it survives a restart; carried
/// by `soundfit state export` (key `calibration`) and put back by `soundfit state import`.
///
/// File format (`soundfit.calibration`, version 1):
///
/// ```json
/// {
///   "format": "soundfit.calibration",
///   "version": 1,
///   "earphone": {"name": "TDH-39", "source": "…", "interaural_attenuation_db": 40,
///                "retspl": [{"hz": 125, "db_spl": 45}, …]},
///   "corrections": {"left": [{"hz": 4000, "db": 6}], "right": []}
/// }
/// ```
///
/// A correction is `measured − nominal` dB (`CalibrationTable`). A pure value.
public struct CalibrationState: Sendable, Equatable {
    public static let format = "soundfit.calibration"
    public static let formatVersion = 1
    /// The file in the state directory.
    public static let fileName = "calibration.json"

    public var earphone: EarphoneTable
    public var table: CalibrationTable

    public init(earphone: EarphoneTable = .tdh39, table: CalibrationTable = CalibrationTable()) {
        self.earphone = earphone
        self.table = table
    }

    /// The state as a JSON object without the header (the export's `calibration` value).
    public var json: JSONValue {
        func points(_ ear: Ear) -> JSONValue {
            .array(table.points(ear).map { .object(JSONObject(["hz": .number($0.frequency), "db": .number($0.correction)])) })
        }
        var phone = JSONObject()
        phone.append("name", .string(earphone.name))
        phone.append("source", .string(earphone.source))
        phone.append("interaural_attenuation_db", .number(earphone.interauralAttenuation))
        phone.append("retspl", .array(earphone.entries.map {
            .object(JSONObject(["hz": .number($0.frequency), "db_spl": .number($0.retspl)]))
        }))
        var root = JSONObject()
        root.append("earphone", .object(phone))
        root.append("corrections", .object(JSONObject(["left": points(.left), "right": points(.right)])))
        return .object(root)
    }

    public func encoded() -> Data {
        var root = JSONObject()
        root.append("format", .string(Self.format))
        root.append("version", .number(Self.formatVersion))
        if case .object(let body) = json {
            for key in ["earphone", "corrections"] { if let value = body[key] { root.append(key, value) } }
        }
        return JSONValue.object(root).fileData()
    }

    /// Reads `calibration.json`; problems name `file` and the field at fault.
    public static func decode(_ data: Data, file: String) throws(DocumentError) -> CalibrationState {
        var reader = DocumentReader(file: file)
        guard let root = reader.header(data, format: format, version: formatVersion) else { throw DocumentError(reader.problems) }
        reader.rejectUnknownKeys(root, known: ["format", "version", "earphone", "corrections"])
        let state = read(root, reader: &reader, prefix: "")
        try reader.check()
        return state!
    }

    /// Reads the body (`earphone`, `corrections`) of `object`, recording problems under `prefix`.
    public static func read(_ object: JSONObject, reader: inout DocumentReader, prefix: String) -> CalibrationState? {
        var earphone: EarphoneTable?
        if let phone = reader.object(object, "earphone", prefix: prefix) {
            let at = prefix + "earphone."
            reader.rejectUnknownKeys(phone, known: ["name", "source", "interaural_attenuation_db", "retspl"], prefix: at)
            let name = reader.string(phone, "name", prefix: at)
            let source = reader.string(phone, "source", prefix: at, required: false)
            let attenuation = reader.number(phone, "interaural_attenuation_db", in: 0...120, prefix: at)
            var entries: [(Double, Double)] = []
            for (index, element) in (reader.array(phone, "retspl", prefix: at) ?? []).enumerated() {
                let field = "\(at)retspl[\(index)]"
                guard case .object(let entry) = element else {
                    reader.fail(field, "expected {\"hz\": …, \"db_spl\": …}, got \(element.summary)")
                    continue
                }
                if let hz = reader.number(entry, "hz", in: 1...100_000, prefix: field + "."),
                   let level = reader.number(entry, "db_spl", in: -20...120, prefix: field + ".") {
                    entries.append((hz, level))
                }
            }
            if let name, let attenuation {
                do {
                    earphone = try EarphoneTable(name: name, entries: entries, interauralAttenuation: attenuation,
                                                 source: source ?? "user table")
                } catch {
                    reader.fail(at + "retspl", error.description)
                }
            }
        }
        var sides: [[CalibrationTable.Point]] = [[], []]
        if let corrections = reader.object(object, "corrections", prefix: prefix) {
            let at = prefix + "corrections."
            reader.rejectUnknownKeys(corrections, known: ["left", "right"], prefix: at)
            for (side, key) in ["left", "right"].enumerated() {
                for (index, element) in (reader.array(corrections, key, prefix: at, required: false) ?? []).enumerated() {
                    let field = "\(at)\(key)[\(index)]"
                    guard case .object(let entry) = element else {
                        reader.fail(field, "expected {\"hz\": …, \"db\": …}, got \(element.summary)")
                        continue
                    }
                    if let hz = reader.number(entry, "hz", in: CalibrationTable.frequencyRange, prefix: field + "."),
                       let db = reader.number(entry, "db", in: CalibrationTable.correctionRange, prefix: field + ".") {
                        sides[side].append(CalibrationTable.Point(frequency: hz, correction: db))
                    }
                }
            }
        }
        let table: CalibrationTable
        do {
            table = try CalibrationTable(left: sides[0], right: sides[1])
        } catch {
            reader.fail(prefix + "corrections", error.description)
            return nil
        }
        guard let earphone else { return nil }
        return CalibrationState(earphone: earphone, table: table)
    }

    /// Reads `calibration.json` in `directory`: nil when there is none.
    public static func load(from directory: URL) throws -> CalibrationState? {
        let url = directory.appendingPathComponent(fileName)
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try decode(data, file: url.path)
    }
}
