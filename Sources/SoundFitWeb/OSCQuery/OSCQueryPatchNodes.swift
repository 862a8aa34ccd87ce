import SoundFitJSON
import SoundFitOSC
import SoundFitRuntime

/// The patch commands as OSCQuery nodes, so a surface can offer the patches the way it offers a
/// choice parameter: `/patch/load` (the name of any patch; `RANGE` `VALS` every loadable one,
/// factory then user, as `/patch/list` gives them), `/patch/save` (a new name: no `RANGE`) and
/// `/patch/delete` (the name of a user patch; `VALS` the user patches). `TYPE` `s`, `ACCESS` 2
/// (write-only: a command, no `VALUE`); `DESCRIPTION` is the command table's summary. Sending
/// to a node over OSC (UDP, TCP or this server's WebSocket) is the command itself.
///
/// `/patch/list` and `/patch/current` are left out: their requests take no value (or an
/// offset), which OSCQuery cannot describe as a write-only node. The nodes exist only when
/// SoundFit has a state directory (else the commands answer `/error`).
///
/// The choices change when a user patch is saved or deleted: the server then sends
/// `PATH_CHANGED` for `changingPaths` to every WebSocket. Nodes never appear or disappear
/// while SoundFit runs (no `PATH_ADDED`/`PATH_REMOVED`).
///
/// Thread rules: any thread except the JACK process callback.
struct OSCQueryPatchNodes: Sendable {
    static let loadPath = "/patch/load"
    static let savePath = "/patch/save"
    static let deletePath = "/patch/delete"
    /// Every node, in documentation order.
    static let paths = [loadPath, savePath, deletePath]
    /// The nodes whose `RANGE` follows the user patches.
    static let changingPaths = [loadPath, deletePath]

    let keeper: StateKeeper

    /// The node at `path`, nil when `path` is not one of these nodes.
    func node(at path: String) -> JSONObject? {
        let choices: [String]?
        switch path {
        case Self.loadPath: choices = keeper.patchNames
        case Self.deletePath: choices = keeper.userPatchNames
        case Self.savePath: choices = nil
        default: return nil
        }
        var node = JSONObject()
        node.append("FULL_PATH", .string(path))
        node.append("TYPE", .string("s"))
        node.append("ACCESS", .number(2))
        node.append("RANGE", choices.map { JSONValue.array([.object(JSONObject(["VALS": .array($0.map { .string($0) })]))]) })
        node.append("DESCRIPTION", OSCCommandDescription.all.first { $0.address == path }.map { .string($0.summary) })
        return node
    }
}
