import NIOHTTP1
import SoundFitJSON
import SoundFitModel
import SoundFitRuntime

/// The OSCQuery namespace (the Vidvox OSCQueryProposal, as libossia and VRChat serve it),
/// generated from the parameter model and the live values: a container node per address
/// segment (`/filter`), a parameter node per entry with `FULL_PATH`, `TYPE`, `RANGE`, `ACCESS`,
/// `VALUE`, `DESCRIPTION`, `UNIT` and `CLIPMODE`, the patch commands as write-only nodes
/// (`OSCQueryPatchNodes`), and two extensions: `DISPLAY_NAME` (the model's
/// label) and `TAPER` (its fader taper).
///
/// Types as OSCQuery clients expect: `f` floats, `i` ints, `s` choices (`RANGE` `VALS` lists every
/// choice, as `/list` does), `T` booleans (no `RANGE`). Every number of an `f` node (`VALUE`,
/// `RANGE` `MIN`/`MAX`) is written with a fraction (`1600.0`): clients infer the type from the
/// JSON text, and `1600` reads as an int. `ACCESS` 3 read-write, 1 read-only. `VALUE` is the
/// value a UDP query answers; a value that cannot be read now (a session parameter without a
/// session) is left out. `CLIPMODE` is `none` for numbers: SoundFit does not clip, it rejects a
/// value outside `RANGE` with `/error` (`both` would promise a clamp; `none` is the proposal's
/// word for "not clipped"). Choices and booleans carry none (clipping means nothing for them).
/// `UNIT` uses the proposal's names (its units.md): `time.hz`, `gain.db`; a model unit it does
/// not list gets no `UNIT` rather than an invented name.
///
/// Thread rules: any thread except the JACK process callback (reads the runtime's values).
public struct OSCQueryNamespace: Sendable {
    /// The attributes a node can be asked for one at a time (`GET /filter/cutoff?VALUE`).
    public static let attributes = ["FULL_PATH", "CONTENTS", "TYPE", "RANGE", "ACCESS", "VALUE", "DESCRIPTION",
                                    "UNIT", "CLIPMODE", "DISPLAY_NAME", "TAPER"]

    let runtime: SoundFitRuntime
    /// The patch command nodes; nil without a state directory.
    let patchNodes: OSCQueryPatchNodes?
    /// The meter nodes (once the OSC surface is attached).
    let meterNodes: OSCQueryMeterNodes

    init(runtime: SoundFitRuntime, stateKeeper: StateKeeper? = nil, meterNodes: OSCQueryMeterNodes = OSCQueryMeterNodes()) {
        self.runtime = runtime
        patchNodes = stateKeeper.map { OSCQueryPatchNodes(keeper: $0) }
        self.meterNodes = meterNodes
    }

    /// The path of every leaf node: the parameters, then the command nodes.
    private var leafPaths: [String] {
        ParameterModel.all.map(\.address) + (patchNodes == nil ? [] : OSCQueryPatchNodes.paths) + meterNodes.paths
    }

    /// Whether `path` is a node of the namespace (the root, a container, a parameter or a command).
    public func contains(_ path: String) -> Bool {
        path == "/" || leafPaths.contains { $0 == path || $0.hasPrefix(path + "/") }
    }

    /// Whether `path` is a parameter node (one LISTEN can follow).
    public func isParameter(_ path: String) -> Bool { ParameterModel.entry(at: path) != nil }

    /// The answer to `GET path[?attribute]`: the node, one attribute of it, 404 for a path
    /// outside the namespace, 400 for an attribute OSCQuery does not define here, 204 for one
    /// the node does not carry (a container's `VALUE`, a unitless parameter's `UNIT`).
    public func respond(path: String, query: String?) -> HTTPResponse {
        let normalized = Self.normalized(path)
        guard contains(normalized) else {
            return .error(.notFound, "\(path) is not in the namespace (GET / lists it)")
        }
        let node = self.node(at: normalized)
        guard let query, !query.isEmpty else { return .json(.object(node)) }
        guard Self.attributes.contains(query) else {
            return .error(.badRequest, "unknown attribute '\(query)'; known: HOST_INFO, \(Self.attributes.joined(separator: ", "))")
        }
        guard let value = node[query] else { return .noContent }
        return .json(.object(JSONObject([JSONObject.Member(key: query, value: value)])))
    }

    /// `path` without a closing slash (`/filter/` is `/filter`; `/` stays).
    public static func normalized(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// The node at `path` (which must be in the namespace), with everything below it.
    func node(at path: String) -> JSONObject {
        if let descriptor = ParameterModel.entry(at: path) { return parameterNode(descriptor) }
        if let command = patchNodes?.node(at: path) { return command }
        if let meter = meterNodes.node(at: path) { return meter }
        var container = JSONObject()
        container.append("FULL_PATH", .string(path))
        container.append("ACCESS", .number(0))
        if path == "/" { container.append("DESCRIPTION", .string("SoundFit: hearing personalization for JACK")) }
        let prefix = path == "/" ? "/" : path + "/"
        var contents = JSONObject()
        for leaf in leafPaths where leaf.hasPrefix(prefix) {
            let name = String(leaf.dropFirst(prefix.count).prefix { $0 != "/" })
            guard contents[name] == nil else { continue }
            contents.append(name, .object(node(at: prefix + name)))
        }
        container.append("CONTENTS", .object(contents))
        return container
    }

    /// A parameter's node, its value read now.
    func parameterNode(_ descriptor: ParameterDescriptor) -> JSONObject {
        var node = JSONObject()
        node.append("FULL_PATH", .string(descriptor.address))
        node.append("TYPE", .string(Self.typeTag(descriptor.kind)))
        node.append("ACCESS", .number(descriptor.access == .readWrite ? 3 : 1))
        if let value = try? runtime.parameter(at: descriptor.address)?.currentValue() {
            node.append("VALUE", .array([Self.json(value)]))
        }
        node.append("RANGE", Self.range(descriptor.kind))
        node.append("CLIPMODE", Self.clipMode(descriptor.kind).map { JSONValue.array([.string($0)]) })
        node.append("UNIT", Self.unit(descriptor.unit).map { JSONValue.array([.string($0)]) })
        node.append("DESCRIPTION", .string(descriptor.summary))
        // Extensions for surfaces that draw their own controls (the web page): the model's
        // label and its fader taper, so a slider moves as `<address>/normalized` does.
        node.append("DISPLAY_NAME", .string(descriptor.displayName))
        node.append("TAPER", .string(Self.taperName(descriptor.taper)))
        return node
    }

    /// The `TAPER` extension attribute: `logarithmic` (frequencies), `decibel` (linear in dB),
    /// `linear`, `integer` (linear, rounded), `toggle` or `steps` (choices in order).
    static func taperName(_ taper: FaderTaper) -> String {
        switch taper {
        case .logarithmic: "logarithmic"
        case .decibel: "decibel"
        case .linear: "linear"
        case .integer: "integer"
        case .toggle: "toggle"
        case .steps: "steps"
        }
    }

    /// The OSC type tag OSCQuery clients expect for a kind.
    public static func typeTag(_ kind: ParameterKind) -> String {
        switch kind {
        case .bool: "T"
        case .float: "f"
        case .int: "i"
        case .choice: "s"
        }
    }

    static func range(_ kind: ParameterKind) -> JSONValue? {
        switch kind {
        case .bool: nil
        case .float(let range):
            .array([.object(JSONObject(["MIN": .floatNumber(range.lowerBound), "MAX": .floatNumber(range.upperBound)]))])
        case .int(let range):
            .array([.object(JSONObject(["MIN": .number(range.lowerBound), "MAX": .number(range.upperBound)]))])
        case .choice(let names):
            .array([.object(JSONObject(["VALS": .array(names.map { .string($0) })]))])
        }
    }

    /// `CLIPMODE`: `none` for numbers (out-of-range values are rejected, not clipped), nil for
    /// choices and booleans.
    static func clipMode(_ kind: ParameterKind) -> String? {
        switch kind {
        case .float, .int: "none"
        case .bool, .choice: nil
        }
    }

    /// A value as JSON: booleans as `true`/`false`, floats with a fraction (`1600.0`), ints,
    /// choices as strings.
    public static func json(_ value: ParameterValue) -> JSONValue {
        switch value {
        case .bool(let value): .bool(value)
        case .float(let value): .floatNumber(value)
        case .int(let value): .number(value)
        case .choice(let value): .string(value)
        }
    }

    /// The model's unit in the proposal's unit names (units.md: `Hz` → `time.hz`, listed under
    /// "Time (and pitch)"; `dB` → `gain.db`); nil for no unit and for a unit the list lacks.
    static func unit(_ unit: String) -> String? {
        switch unit {
        case "Hz": "time.hz"
        case "dB": "gain.db"
        default: nil
        }
    }
}
