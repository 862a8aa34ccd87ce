import Foundation
import SoundFitModel
import SoundFitHearing
import SoundFitJSON
import SoundFitProcessing

extension StateDocument {
    /// The document's JSON, parameters in the order of `descriptors`.
    public func encoded(descriptors: [ParameterDescriptor]) -> Data {
        var root = JSONObject()
        root.append("format", .string(Self.format))
        root.append("version", .number(Self.formatVersion))
        root.append("parameters", .object(ParameterCoding.encode(parameters, descriptors: descriptors)))
        var deliveryObject = JSONObject()
        switch delivery.deliveryStyle {
        case .continuous:
            deliveryObject.append("style", .string("continuous"))
        case .discrete(let settle):
            deliveryObject.append("style", .string("discrete"))
            deliveryObject.append("settle_seconds", .number(settle.seconds))
        }
        deliveryObject.append("timeout_seconds", .number(delivery.deliveryTimeout.seconds))
        root.append("delivery", .object(deliveryObject))
        root.append("session", .object(JSONObject([
            "mode": .string(session.personalization.modeName),
            "tech_level": .number(session.techLevel.value),
        ])))
        root.append("current_patch", currentPatch.map { patch in
            .object(JSONObject([
                "number": .number(patch.number), "name": .string(patch.name), "modified": .bool(patch.isModified),
            ]))
        } ?? .null)
        root.append("hearing_profile", hearingProfile?.json ?? .null)
        root.append("presets", .array(presets.map(\.json)))
        if let calibration { root.append("calibration_db_spl", .number(calibration)) }
        if let calibrationState { root.append("calibration", calibrationState.json) }
        if recommendationPending { root.append("recommendation_pending", .bool(true)) }
        if !midiMappings.isEmpty {
            root.append("midi_mappings", .array(midiMappings.map { mapping in
                .object(JSONObject([
                    "address": .string(mapping.address), "channel": .number(mapping.channel),
                    "controller": .number(mapping.controller),
                ]))
            }))
        }
        return JSONValue.object(root).fileData()
    }

    /// Reads and validates a state document; every problem names `file` and the field at fault.
    /// Missing writable parameters take their defaults (a document of an older SoundFit).
    public static func decode(_ data: Data, file: String, descriptors: [ParameterDescriptor]) throws(DocumentError) -> StateDocument {
        var reader = DocumentReader(file: file)
        guard let root = reader.header(data, format: format, version: formatVersion) else { throw DocumentError(reader.problems) }
        reader.rejectUnknownKeys(root, known: [
            "format", "version", "parameters", "delivery", "session", "current_patch", "hearing_profile", "presets",
            "calibration_db_spl", "midi_mappings", "calibration", "recommendation_pending",
        ])
        let parameters = ParameterCoding.decode(
            root["parameters"], field: "parameters", descriptors: descriptors, completeness: .defaultsForMissing, reader: &reader)
        let delivery = decodeDelivery(root, reader: &reader)
        let session = decodeSession(root, reader: &reader)
        let currentPatch = decodeCurrentPatch(root, reader: &reader)
        var profile: HearingProfile?
        if let value = root["hearing_profile"], value != .null {
            profile = HearingProfile.read(value, field: "hearing_profile", reader: &reader)
        }
        var presets: [PresetPayload] = []
        for (index, element) in (reader.array(root, "presets", required: false, expecting: "an array of presets") ?? []).enumerated() {
            if let payload = PresetPayload.read(element, field: JSONDocument.path("presets", index: index), reader: &reader) {
                presets.append(payload)
            }
        }
        let calibration = reader.number(root, "calibration_db_spl", in: DocumentSettings.calibrationRange, required: false)
        let midiMappings = decodeMIDIMappings(root, reader: &reader)
        let recommendationPending: Bool? = root["recommendation_pending"] == nil ? false : reader.bool(root, "recommendation_pending")
        var calibrationState: CalibrationState?
        if let object = reader.object(root, "calibration", required: false) {
            reader.rejectUnknownKeys(object, known: ["earphone", "corrections"], prefix: "calibration.")
            calibrationState = CalibrationState.read(object, reader: &reader, prefix: "calibration.")
        }
        try reader.check()
        var document = StateDocument(parameters: parameters, delivery: delivery!, session: session!, currentPatch: currentPatch,
                                     hearingProfile: profile, presets: presets)
        document.calibration = calibration
        document.midiMappings = midiMappings
        document.calibrationState = calibrationState
        document.recommendationPending = recommendationPending ?? false
        return document
    }

    private static func decodeMIDIMappings(_ root: JSONObject, reader: inout DocumentReader) -> [MIDIMapping] {
        let elements = reader.array(root, "midi_mappings", required: false, expecting: "an array of MIDI mappings") ?? []
        if elements.count > MIDIMapping.maximumCount {
            reader.fail("midi_mappings", "\(elements.count) mappings; at most \(MIDIMapping.maximumCount) are kept")
            return []
        }
        var mappings: [MIDIMapping] = []
        for (index, element) in elements.enumerated() {
            let field = JSONDocument.path("midi_mappings", index: index)
            guard case .object(let object) = element else {
                reader.fail(field, "expected a MIDI mapping object, got \(element.summary)")
                continue
            }
            let prefix = field + "."
            reader.rejectUnknownKeys(object, known: ["address", "channel", "controller"], prefix: prefix)
            let channel = reader.integer(object, "channel", in: MIDIMapping.channels, prefix: prefix)
            let controller = reader.integer(object, "controller", in: MIDIMapping.controllers, prefix: prefix)
            guard let address = reader.string(object, "address", prefix: prefix), let channel, let controller else { continue }
            do throws(ParameterError) {
                let mapping = try MIDIMapping(address: address, channel: channel, controller: controller)
                if mappings.contains(where: { $0.channel == channel && $0.controller == controller }) {
                    reader.fail(field, "channel \(channel) controller \(controller) is mapped twice")
                } else {
                    mappings.append(mapping)
                }
            } catch {
                reader.fail(prefix + "address", error.description)
            }
        }
        return mappings.sorted()
    }

    private static func decodeDelivery(_ root: JSONObject, reader: inout DocumentReader) -> DeliveryConfiguration? {
        guard let object = reader.object(root, "delivery") else { return nil }
        let prefix = "delivery."
        reader.rejectUnknownKeys(object, known: ["style", "settle_seconds", "timeout_seconds"], prefix: prefix)
        let timeout = reader.number(object, "timeout_seconds", in: timeoutRange, prefix: prefix)
        let style: DeliveryConfiguration.DeliveryStyle?
        switch reader.string(object, "style", prefix: prefix) {
        case "continuous"?:
            style = .continuous
        case "discrete"?:
            if object["settle_seconds"] == nil {
                style = .discrete()
            } else {
                style = reader.number(object, "settle_seconds", in: settleRange, prefix: prefix)
                    .map { .discrete(settleTime: .seconds(exactly: $0)) }
            }
        case let other?:
            reader.fail(prefix + "style", "'\(NumberText.escapedForMessage(other))' is not a delivery style (continuous or discrete)")
            style = nil
        case nil:
            style = nil
        }
        guard let style, let timeout else { return nil }
        return DeliveryConfiguration(deliveryStyle: style, deliveryTimeout: .seconds(exactly: timeout))
    }

    private static func decodeSession(_ root: JSONObject, reader: inout DocumentReader) -> ProcessingConfiguration? {
        guard let object = reader.object(root, "session") else { return nil }
        let prefix = "session."
        reader.rejectUnknownKeys(object, known: ["mode", "tech_level"], prefix: prefix)
        let level = reader.integer(object, "tech_level", in: TechLevel.range, prefix: prefix)
        let mode = reader.string(object, "mode", prefix: prefix)
        if let mode, mode != "fine_tuning", mode != "single_preset" {
            reader.fail(prefix + "mode", "'\(NumberText.escapedForMessage(mode))' is not a personalization mode (fine_tuning or single_preset)")
            return nil
        }
        guard let mode, let level, let techLevel = try? TechLevel(level) else { return nil }
        return mode == "fine_tuning" ? .fineTuning(techLevel: techLevel) : .singlePreset(techLevel: techLevel)
    }

    private static func decodeCurrentPatch(_ root: JSONObject, reader: inout DocumentReader) -> CurrentPatch? {
        guard let object = reader.object(root, "current_patch", required: false) else { return nil }
        let prefix = "current_patch."
        reader.rejectUnknownKeys(object, known: ["number", "name", "modified"], prefix: prefix)
        let number = reader.integer(object, "number", in: Int(Int32.min)...Int(Int32.max), prefix: prefix)
        let name = reader.string(object, "name", prefix: prefix)
        if let name, let problem = PatchName.problem(name) { reader.fail(prefix + "name", problem) }
        let modified = reader.bool(object, "modified", prefix: prefix)
        guard let number, let name, let modified else { return nil }
        return CurrentPatch(number: number, name: name, isModified: modified)
    }
}
