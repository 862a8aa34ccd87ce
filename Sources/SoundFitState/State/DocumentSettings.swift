import Foundation
import SoundFitHearing
import SoundFitJSON
import SoundFitModel

/// Document-level settings, as an AUv3 audio unit's `fullStateForDocument`: how this installation is set
/// up rather than what it sounds like. Kept apart from `StateDocument`, so importing a state
/// (or a patch) never moves the OSC port or the calibration.
///
/// File format (`soundfit.document`, version 1):
///
/// ```json
/// {
///   "format": "soundfit.document",
///   "version": 1,
///   "calibration_db_spl": 100,
///   "channels": 2,
///   "osc": {"host": "127.0.0.1", "port": 7700, "allow": ["127.0.0.1", "192.168.1.0/24"]}
/// }
/// ```
///
/// `allow` holds `--osc-allow` entries as text; the OSC module parses them (`OSCAllowList`).
public struct DocumentSettings: Sendable, Equatable {
    public static let format = "soundfit.document"
    public static let formatVersion = 1
    /// The file in the state directory.
    public static let fileName = "document.json"
    public static var calibrationRange: ClosedRange<Double> { PresetPayload.calibrationRange }
    public static let channelRange: ClosedRange<Int> = 1...64

    /// dB SPL of a full-scale sine (personalization presets are generated for it).
    public var calibration: Double
    /// Audio inputs and outputs.
    public var channelCount: Int
    public var osc: OSCSettings

    /// Where SoundFit listens for OSC and whom it lets in.
    public struct OSCSettings: Sendable, Equatable {
        public var host: String
        /// 0…65535 (0 picks a free port).
        public var port: Int
        /// IPv4 addresses and prefixes allowed to send (empty = everyone who can reach `host`).
        public var allow: [String]

        public init(host: String = "127.0.0.1", port: Int = 7700, allow: [String] = []) {
            self.host = host
            self.port = port
            self.allow = allow
        }
    }

    /// The defaults of `soundfit run`.
    public init(calibration: Double = PresetGenerator.defaultCalibration, channelCount: Int = 2, osc: OSCSettings = OSCSettings()) {
        self.calibration = calibration
        self.channelCount = channelCount
        self.osc = osc
    }

    public func encoded() -> Data {
        var root = JSONObject()
        root.append("format", .string(Self.format))
        root.append("version", .number(Self.formatVersion))
        root.append("calibration_db_spl", .number(calibration))
        root.append("channels", .number(channelCount))
        root.append("osc", .object(JSONObject([
            "host": .string(osc.host), "port": .number(osc.port), "allow": .array(osc.allow.map(JSONValue.string)),
        ])))
        return JSONValue.object(root).fileData()
    }

    /// Reads and validates document settings; problems name `file` and the field at fault.
    public static func decode(_ data: Data, file: String) throws(DocumentError) -> DocumentSettings {
        var reader = DocumentReader(file: file)
        guard let root = reader.header(data, format: format, version: formatVersion) else { throw DocumentError(reader.problems) }
        reader.rejectUnknownKeys(root, known: ["format", "version", "calibration_db_spl", "channels", "osc"])
        let calibration = reader.number(root, "calibration_db_spl", in: calibrationRange)
        let channels = reader.integer(root, "channels", in: channelRange)
        var osc: OSCSettings?
        if let object = reader.object(root, "osc") {
            reader.rejectUnknownKeys(object, known: ["host", "port", "allow"], prefix: "osc.")
            let host = reader.string(object, "host", prefix: "osc.")
            if let host, host.isEmpty || host.count > 253 || host.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } ?? false }) {
                reader.fail("osc.host", "'\(NumberText.escapedForMessage(host))' is not a host name or address")
            }
            let port = reader.integer(object, "port", in: 0...65535, prefix: "osc.")
            var allow: [String] = []
            switch object["allow"] {
            case nil, .null?: break
            case .array(let elements)?:
                for (index, element) in elements.enumerated() {
                    guard case .string(let entry) = element, !entry.isEmpty, !entry.contains(where: \.isWhitespace) else {
                        reader.fail("osc.allow[\(index)]", "expected an address or prefix such as \"192.168.1.0/24\", got \(element.summary)")
                        continue
                    }
                    allow.append(entry)
                }
            case let other?:
                reader.fail("osc.allow", "expected an array of addresses or prefixes, got \(other.summary)")
            }
            if let host, let port { osc = OSCSettings(host: host, port: port, allow: allow) }
        }
        try reader.check()
        return DocumentSettings(calibration: calibration!, channelCount: channels!, osc: osc!)
    }
}
