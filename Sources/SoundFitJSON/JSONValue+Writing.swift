import Foundation

extension JSONValue {
    /// Pretty JSON for a file a person may edit: two-space indentation, `"key": value`, object
    /// keys in their order, arrays of plain values on one line, a final newline.
    public func fileData() -> Data {
        var text = ""
        write(to: &text, indent: 0)
        text += "\n"
        return Data(text.utf8)
    }

    /// Compact JSON: no whitespace at all (for a message or a datagram).
    public func compactData() -> Data {
        var text = ""
        writeCompact(to: &text)
        return Data(text.utf8)
    }

    private func write(to text: inout String, indent: Int) {
        switch self {
        case .object(let object):
            guard !object.members.isEmpty else {
                text += "{}"
                return
            }
            let inner = String(repeating: " ", count: indent + 2)
            text += "{\n"
            for (offset, member) in object.members.enumerated() {
                text += inner
                Self.writeString(member.key, to: &text)
                text += ": "
                member.value.write(to: &text, indent: indent + 2)
                text += offset == object.members.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "}"
        case .array(let elements):
            guard !elements.isEmpty else {
                text += "[]"
                return
            }
            if elements.allSatisfy(\.isPlain) {
                text += "["
                for (offset, element) in elements.enumerated() {
                    if offset > 0 { text += ", " }
                    element.writeCompact(to: &text)
                }
                text += "]"
                return
            }
            let inner = String(repeating: " ", count: indent + 2)
            text += "[\n"
            for (offset, element) in elements.enumerated() {
                text += inner
                element.write(to: &text, indent: indent + 2)
                text += offset == elements.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "]"
        default:
            writeCompact(to: &text)
        }
    }

    private func writeCompact(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let literal): text += literal
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let elements):
            text += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text += "," }
                element.writeCompact(to: &text)
            }
            text += "]"
        case .object(let object):
            text += "{"
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { text += "," }
                Self.writeString(member.key, to: &text)
                text += ":"
                member.value.writeCompact(to: &text)
            }
            text += "}"
        }
    }

    /// Not an array or object.
    private var isPlain: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    private static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            default:
                if scalar.value < 0x20 {
                    let digits = String(scalar.value, radix: 16, uppercase: true)
                    text += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}
