import SoundFitJSON
import SoundFitModel

/// How a document treats writable parameters it does not mention.
public enum ParameterCompleteness: Sendable, Equatable {
    /// Every writable parameter must be present (factory patches: they ship with this version).
    case required
    /// Missing parameters take their descriptor's default value (user patches and state
    /// documents, which an older SoundFit with fewer parameters may have written).
    case defaultsForMissing
}

/// The `"parameters"` object of patches and state documents: address → JSON value, validated
/// against the parameter descriptors (kind and range); only writable parameters belong there.
///
/// JSON types: booleans for bool parameters, numbers for float and int parameters, strings for
/// choices. Values are rejected, never clamped, like every value SoundFit receives.
enum ParameterCoding {
    /// The parameters a document holds: every `access == .readWrite` descriptor, in order.
    static func writable(_ descriptors: [ParameterDescriptor]) -> [ParameterDescriptor] {
        descriptors.filter { $0.access == .readWrite }
    }

    /// The JSON form of `value`.
    static func json(_ value: ParameterValue) -> JSONValue {
        switch value {
        case .bool(let on): .bool(on)
        case .float(let number): .number(number)
        case .int(let number): .number(number)
        case .choice(let name): .string(name)
        }
    }

    /// `values` as a JSON object in descriptor order (addresses unknown to the descriptors go
    /// last, sorted, so nothing is dropped silently; reading them back reports them).
    static func encode(_ values: [String: ParameterValue], descriptors: [ParameterDescriptor]) -> JSONObject {
        var object = JSONObject()
        let ordered = writable(descriptors).map(\.address)
        for address in ordered {
            object.append(address, values[address].map(json))
        }
        for address in values.keys.filter({ !ordered.contains($0) }).sorted() {
            object.append(address, values[address].map(json))
        }
        return object
    }

    /// Reads the parameters object at `field`; problems go to `reader`.
    static func decode(_ value: JSONValue?, field: String, descriptors: [ParameterDescriptor],
                       completeness: ParameterCompleteness, reader: inout DocumentReader) -> [String: ParameterValue] {
        guard let value else {
            reader.fail(field, "missing (expected an object of parameter values)")
            return [:]
        }
        guard case .object(let object) = value else {
            reader.fail(field, "expected an object of parameter values, got \(value.summary)")
            return [:]
        }
        let byAddress = Dictionary(descriptors.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        var values: [String: ParameterValue] = [:]
        for member in object.members {
            let path = "\(field).\(member.key)"
            guard let descriptor = byAddress[member.key] else {
                reader.fail(path, "unknown parameter address")
                continue
            }
            guard descriptor.access == .readWrite else {
                reader.fail(path, "is read-only: it cannot be set, so it does not belong in \(field)")
                continue
            }
            if let parameter = parameterValue(member.value, descriptor: descriptor, field: path, reader: &reader) {
                values[member.key] = parameter
            }
        }
        for descriptor in writable(descriptors) where object[descriptor.address] == nil {
            switch completeness {
            case .required:
                reader.fail("\(field).\(descriptor.address)", "missing (every writable parameter must be set)")
            case .defaultsForMissing:
                values[descriptor.address] = descriptor.defaultValue
            }
        }
        return values
    }

    /// Converts and validates one value.
    static func parameterValue(_ value: JSONValue, descriptor: ParameterDescriptor, field: String,
                               reader: inout DocumentReader) -> ParameterValue? {
        let candidate: ParameterValue
        switch (descriptor.kind, value) {
        case (.bool, .bool(let on)):
            candidate = .bool(on)
        case (.float(let range), .number):
            let number = Float(value.double ?? .nan)
            guard number.isFinite else {
                reader.fail(field, "\(value.summary) is not a finite 32-bit number")
                return nil
            }
            guard range.contains(number) else {
                reader.fail(field, "\(value.summary) is out of range \(NumberText.format(range))")
                return nil
            }
            candidate = .float(number)
        case (.int(let range), .number):
            guard let number = reader.integer(value, in: range, field: field) else { return nil }
            candidate = .int(number)
        case (.choice(let names), .string(let name)):
            guard names.contains(name) else {
                reader.fail(field, "\(value.summary) is not one of \(names.joined(separator: ", "))")
                return nil
            }
            candidate = .choice(name)
        default:
            reader.fail(field, "expected \(expectation(descriptor.kind)), got \(value.summary)")
            return nil
        }
        do {
            try descriptor.validate(candidate)
        } catch {
            reader.fail(field, error.description)
            return nil
        }
        return candidate
    }

    /// Checks values given in code (a user patch to save, a state document to write).
    static func validate(_ values: [String: ParameterValue], descriptors: [ParameterDescriptor], file: String,
                         field: String = "parameters") throws(DocumentError) {
        var reader = DocumentReader(file: file)
        let byAddress = Dictionary(descriptors.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        for (address, value) in values.sorted(by: { $0.key < $1.key }) {
            let path = "\(field).\(address)"
            guard let descriptor = byAddress[address] else {
                reader.fail(path, "unknown parameter address")
                continue
            }
            guard descriptor.access == .readWrite else {
                reader.fail(path, "is read-only: it cannot be set, so it does not belong in \(field)")
                continue
            }
            guard parameterValue(json(value), descriptor: descriptor, field: path, reader: &reader) != nil else { continue }
            do {
                try descriptor.validate(value)
            } catch {
                reader.fail(path, error.description)
            }
        }
        for descriptor in writable(descriptors) where values[descriptor.address] == nil {
            reader.fail("\(field).\(descriptor.address)", "missing (every writable parameter must be set)")
        }
        try reader.check()
    }

    /// "true or false", "a number (20…20000)", "an integer (1…4)", "one of the strings lowpass, highpass, …".
    static func expectation(_ kind: ParameterKind) -> String {
        switch kind {
        case .bool: "true or false"
        case .float(let range): "a number (\(NumberText.format(range)))"
        case .int(let range): "an integer (\(range.lowerBound)…\(range.upperBound))"
        case .choice(let names): "one of the strings \(names.joined(separator: ", "))"
        }
    }
}
