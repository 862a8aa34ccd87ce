/// The parameter table in Markdown, generated from the model's entries. The tables of
/// docs/osc-guide.md and docs/OSC.md are this text; tests keep them identical.
public enum ParameterTable {
    public static func markdown(_ descriptors: [ParameterDescriptor] = ParameterModel.all) -> String {
        var lines = [
            "| address | type | access | range / values | default | unit | what it does |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for descriptor in descriptors {
            let range: String
            switch descriptor.kind {
            case .bool: range = "0 / 1 (T/F, int or float accepted)"
            case .float(let r): range = "\(format(r.lowerBound)) … \(format(r.upperBound))"
            case .int(let r): range = "\(r.lowerBound) … \(r.upperBound)"
            case .choice(let names): range = names.joined(separator: " ")
            }
            let defaultText: String
            switch descriptor.defaultValue {
            case .float(let v): defaultText = format(v)
            default: defaultText = descriptor.defaultValue.description
            }
            lines.append("| `\(descriptor.address)` | \(descriptor.kind.typeName) | \(descriptor.access.rawValue) | \(range) | \(defaultText) | \(descriptor.unit) | \(descriptor.summary) |")
        }
        return lines.joined(separator: "\n")
    }

    private static func format(_ value: Float) -> String {
        value == value.rounded() && abs(value) < 1e7 ? String(Int(value)) : "\(value)"
    }
}
