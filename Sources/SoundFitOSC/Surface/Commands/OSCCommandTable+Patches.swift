import SoundFitRuntime
import SoundFitState

/// `/patch/list`, `/patch/load`, `/patch/save`, `/patch/delete`, `/patch/current`. They need
/// the state keeper; without a state directory they answer `/error`.
extension OSCCommandTable {
    static let patches = [patchList, patchLoad, patchSave, patchDelete, patchCurrent]

    /// `/patch/current ,i number ,s name ,i modified ,i pending`: the reply of loading and of
    /// querying (and the three-argument form of earlier versions, also a reply).
    static let currentPatchReplies = [
        OSCMessageForm("/patch/current", .exactly([.int, .string(), .int, .int])),
        OSCMessageForm("/patch/current", .exactly([.int, .string(), .int])),
    ]

    static let patchList = OSCCommand(
        OSCCommandDescription(
            "/patch/list", section: .patches,
            summary: "Lists factory patches (number ≥ 0) and user patches (number < 0).",
            reply: "`/patch/item ,i number ,s name` for each patch, then `/patch/end ,i count`.",
            errors: ["any argument (it takes none)"],
            examples: ["oscsend localhost 7700 /patch/list"]),
        requests: [.bare("/patch/list")],
        replies: [OSCMessageForm("/patch/item", .any), OSCMessageForm("/patch/end", .any)],
        handle: { request in
            guard request.arguments.isEmpty else {
                request.reject("/patch/list takes no arguments")
                return
            }
            guard let keeper = stateKeeper(request) else { return }
            let patches = keeper.library.patches
            for patch in patches {
                request.reply(OSCMessage("/patch/item", [.int32(Int32(patch.number)), .string(patch.name)]))
            }
            request.reply(OSCMessage("/patch/end", [.int32(Int32(patches.count))]))
        })

    static let patchLoad = OSCCommand(
        OSCCommandDescription(
            "/patch/load", section: .patches,
            summary: "Applies a patch: every parameter it holds changes (subscribers get the feedback). While no "
                + "session is active (deactivated, or JACK restarting), its filter, ring modulator and output values "
                + "apply at once and its `/processing/*` values wait for the next session, which gets them first; "
                + "`pending` says so until then.",
            arguments: [Arg("i|s", "patch", "the patch number or name.")],
            reply: "`/patch/current ,i number ,s name ,i modified ,i pending` to the sender and to subscribers (again "
                + "when `pending` returns to 0), plus value feedback to subscribers for every parameter the patch changed.",
            errors: ["no patch with that number or name",
                     "the patch needs a hearing profile (its personalization preset) that is missing, or a preset variant the session's mode does not offer: nothing is changed",
                     "a parameter of the patch could not be applied (e.g. no JACK server)"],
            examples: ["oscsend localhost 7700 /patch/load i 0", "oscsend localhost 7700 /patch/load s bright"]),
        requests: [OSCMessageForm("/patch/load", .any)],
        replies: currentPatchReplies,
        handle: { request in
            guard let keeper = stateKeeper(request), let reference = patchReference(request) else { return }
            request.answerLater {
                _ = try await keeper.loadPatch(reference)
                request.reply(currentPatchMessage(keeper.currentPatch, pending: keeper.sessionValuesPending))
            }
        })

    static let patchSave = OSCCommand(
        OSCCommandDescription(
            "/patch/save", section: .patches,
            summary: "Saves the current parameter state as a user patch.",
            arguments: [Arg("s", "name", "the patch name.")],
            reply: "`/patch/saved ,i number ,s name` (number < 0).",
            errors: ["empty name", "the patch could not be written to the state directory"],
            examples: ["oscsend localhost 7700 /patch/save s evening"]),
        requests: [OSCMessageForm("/patch/save", .any)],
        replies: [OSCMessageForm("/patch/saved", .any)],
        handle: { request in
            guard let keeper = stateKeeper(request) else { return }
            guard request.arguments.count == 1, case .string(let name) = request.arguments[0] else {
                request.reject("expects ,s name")
                return
            }
            do {
                let patch = try keeper.savePatch(name: name)
                request.reply(OSCMessage("/patch/saved", [.int32(Int32(patch.number)), .string(patch.name)]))
            } catch {
                request.reject("\(error)")
            }
        })

    static let patchDelete = OSCCommand(
        OSCCommandDescription(
            "/patch/delete", section: .patches,
            summary: "Deletes a user patch.",
            arguments: [Arg("i", "number", "a user patch number (< 0).")],
            reply: "`/patch/deleted ,i number`.",
            errors: ["factory patches (number ≥ 0) cannot be deleted", "no user patch with that number"],
            examples: ["oscsend localhost 7700 /patch/delete i -1"]),
        requests: [OSCMessageForm("/patch/delete", .any)],
        replies: [OSCMessageForm("/patch/deleted", .any)],
        handle: { request in
            guard let keeper = stateKeeper(request), let reference = patchReference(request) else { return }
            do {
                let patch = try keeper.deletePatch(reference)
                request.reply(OSCMessage("/patch/deleted", [.int32(Int32(patch.number))]))
            } catch {
                request.reject("\(error)")
            }
        })

    static let patchCurrent = OSCCommand(
        OSCCommandDescription(
            "/patch/current", section: .patches,
            summary: "The patch loaded or saved last, whether any parameter changed since (modified 0/1), and whether "
                + "its `/processing/*` values wait for a session (pending 0/1). A first start (no saved state) runs "
                + "at factory patch 0, \"Transparent\" (the defaults).",
            reply: "`/patch/current ,i number ,s name ,i modified ,i pending`.",
            errors: ["no patch is current (the current one was deleted)", "any argument (it takes none)"],
            examples: ["oscsend localhost 7700 /patch/current"]),
        requests: [.bare("/patch/current")],
        replies: currentPatchReplies,
        handle: { request in
            guard let keeper = stateKeeper(request) else { return }
            guard request.arguments.isEmpty else {
                request.reject("/patch/current takes no arguments")
                return
            }
            guard keeper.currentPatch != nil else {
                request.reject("no patch is current: the current one was deleted (load or save one)")
                return
            }
            request.reply(currentPatchMessage(keeper.currentPatch, pending: keeper.sessionValuesPending))
        })

    /// `/patch/current ,i number ,s name ,i modified ,i pending` (`,i -2147483648 ,s "" ,i 0 ,i 0`
    /// for none).
    static func currentPatchMessage(_ current: CurrentPatch?, pending: Bool) -> OSCMessage {
        guard let current else {
            return OSCMessage("/patch/current", [.int32(Int32.min), .string(""), .int32(0), .int32(0)])
        }
        return OSCMessage("/patch/current", [.int32(Int32(current.number)), .string(current.name),
                                             .int32(current.isModified ? 1 : 0), .int32(pending ? 1 : 0)])
    }

    /// `,i number` or `,s name`; nil (and an `/error`) for anything else.
    private static func patchReference(_ request: OSCCommandRequest) -> PatchReference? {
        guard request.arguments.count == 1 else {
            request.reject("expects ,i number or ,s name")
            return nil
        }
        switch request.arguments[0] {
        case .string(let name), .symbol(let name): return .name(name)
        case let argument:
            guard let number = argument.integerValue else {
                request.reject("expects ,i number or ,s name")
                return nil
            }
            return .number(number)
        }
    }

    /// The state keeper; nil (and an `/error`) without a state directory.
    private static func stateKeeper(_ request: OSCCommandRequest) -> StateKeeper? {
        guard let keeper = request.surface.stateKeeper else {
            request.reject("patches are not available (no state directory)")
            return nil
        }
        return keeper
    }
}
