import Foundation
import SoundFitJSON
import SoundFitModel

/// A named snapshot of every writable parameter, AUv3-style: factory patches have numbers ≥ 0
/// and ship as files in `patches/`; user patches have numbers < 0 and live in the state
/// directory (`UserPatchStore`).
///
/// File format (`soundfit.patch`, version 1), one human-editable JSON file per patch:
///
/// ```json
/// {
///   "format": "soundfit.patch",
///   "version": 1,
///   "number": 2,
///   "name": "Lowpass 1 kHz",
///   "description": "The biquad demo's default: RBJ lowpass at 1 kHz, Q 0.7071.",
///   "parameters": {
///     "/processing/enabled": false,
///     "/filter/type": "lowpass",
///     "/filter/cutoff": 1000,
///     …
///   }
/// }
/// ```
///
/// Parameters are JSON booleans (bool), numbers (float, int) and strings (choices), keyed by
/// address; read-only parameters never appear. `description` is optional.
public struct Patch: Sendable, Equatable {
    public static let format = "soundfit.patch"
    public static let formatVersion = 1

    /// ≥ 0 for factory patches, < 0 for user patches.
    public var number: Int
    public var name: String
    /// A sentence or two for people reading the file or a patch list (the file's `description`).
    public var summary: String
    /// Address → value, for every writable parameter.
    public var parameters: [String: ParameterValue]

    public init(number: Int, name: String, summary: String = "", parameters: [String: ParameterValue]) {
        self.number = number
        self.name = name
        self.summary = summary
        self.parameters = parameters
    }

    /// Factory patches (number ≥ 0) are read-only.
    public var isFactory: Bool { number >= 0 }

    /// The file's JSON, parameters in the order of `descriptors`.
    public func encoded(descriptors: [ParameterDescriptor]) -> Data {
        var object = JSONObject()
        object.append("format", .string(Self.format))
        object.append("version", .number(Self.formatVersion))
        object.append("number", .number(number))
        object.append("name", .string(name))
        if !summary.isEmpty { object.append("description", .string(summary)) }
        object.append("parameters", .object(ParameterCoding.encode(parameters, descriptors: descriptors)))
        return JSONValue.object(object).fileData()
    }

    /// Reads and validates a patch file; every problem names `file` and the field at fault.
    ///
    /// - Parameters:
    ///   - file: the file as shown in messages (`patches/02-lowpass-1k.json`).
    ///   - descriptors: the whole address space; only writable parameters may appear.
    ///   - completeness: whether every writable parameter must be present.
    public static func decode(_ data: Data, file: String, descriptors: [ParameterDescriptor],
                              completeness: ParameterCompleteness) throws(DocumentError) -> Patch {
        var reader = DocumentReader(file: file)
        guard let object = reader.header(data, format: format, version: formatVersion) else { throw DocumentError(reader.problems) }
        reader.rejectUnknownKeys(object, known: ["format", "version", "number", "name", "description", "parameters"])
        let number = reader.integer(object, "number", in: Int(Int32.min)...Int(Int32.max))
        let name = reader.string(object, "name")
        if let name, let problem = PatchName.problem(name) {
            reader.fail("name", problem)
        }
        let summary = reader.string(object, "description", required: false) ?? ""
        let parameters = ParameterCoding.decode(
            object["parameters"], field: "parameters", descriptors: descriptors, completeness: completeness, reader: &reader)
        try reader.check()
        return Patch(number: number!, name: name!, summary: summary, parameters: parameters)
    }
}
