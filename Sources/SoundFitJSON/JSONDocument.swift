/// A place in a JSON text: 1-based line and column (columns count characters, not bytes).
public struct JSONLocation: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line 3, column 12`.
    public var description: String { "line \(line), column \(column)" }
}

/// A parsed JSON document: its value, and where each value of it starts in the text.
///
/// Values are found by field path, the notation every SoundFit error uses: `""` for the root,
/// `.key` below an object (no dot at the start: `delivery.style`, `parameters./filter/cutoff`),
/// `[index]` below an array (`left[2].db_hl`, `presets[0].left[3].gain_db`).
public struct JSONDocument: Sendable {
    public let root: JSONValue
    private let locations: [String: JSONLocation]

    init(root: JSONValue, locations: [String: JSONLocation]) {
        self.root = root
        self.locations = locations
    }

    /// Where the value at `field` starts. For a field the document lacks (a missing member),
    /// where the nearest enclosing value starts; nil for a path outside the document.
    public func location(of field: String) -> JSONLocation? {
        var path = Substring(field)
        while true {
            if let location = locations[String(path)] { return location }
            guard !path.isEmpty else { return nil }
            if path.last == "]", let open = path.lastIndex(of: "[") {
                path = path[..<open]
            } else if let dot = path.lastIndex(of: ".") {
                path = path[..<dot]
            } else {
                path = ""
            }
        }
    }

    /// The path of member `key` of the value at `path`.
    public static func path(_ path: String, key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The path of element `index` of the array at `path`.
    public static func path(_ path: String, index: Int) -> String {
        "\(path)[\(index)]"
    }
}
