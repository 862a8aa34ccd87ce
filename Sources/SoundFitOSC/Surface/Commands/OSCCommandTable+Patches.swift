import OSCCore
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

    /// Patches per `/patch/list` answer: a page is at most about 1.5 KB, whatever the library holds.
    static let patchListPageSize = 32

    static let patchList = OSCCommand(
        OSCCommandDescription(
            "/patch/list", section: .patches,
            summary: "Lists factory patches (number ≥ 0) and user patches (number < 0), \(patchListPageSize) per "
                + "request: a page starts at `offset` (default 0); ask again with the next offset for more.",
            arguments: [Arg("i", "offset", "the position of the first patch to list, 0…count.", optional: true)],
            reply: "`/patch/item ,i number ,s name` for each patch of the page (at most \(patchListPageSize)), then "
                + "`/patch/end ,i count ,i next_offset`: the number of patches in all, and the offset of the next page "
                + "(-1 after the last).",
            errors: ["an argument that is not one int offset", "an offset beyond the number of patches"],
            examples: ["oscsend localhost 7700 /patch/list", "oscsend localhost 7700 /patch/list i 32"]),
        requests: [.bare("/patch/list"), OSCMessageForm("/patch/list", .exactly([.any]))],
        replies: [OSCMessageForm("/patch/item", .any), OSCMessageForm("/patch/end", .any)],
        prepare: { request in
            if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
            let arguments = request.arguments
            guard arguments.count <= 1, arguments.allSatisfy({ if case .int32 = $0 { true } else { false } }) else {
                return .reject("/patch/list takes [,i offset]")
            }
            guard case .success(let keeper) = stateKeeper(request) else { return .reject(noStateDirectory.reason) }
            let patches = keeper.library.patches
            let offset = arguments.first?.integerValue ?? 0
            guard (0...patches.count).contains(offset) else {
                return .reject("offset \(offset) is outside 0…\(patches.count) (there are \(patches.count) patches)")
            }
            return .perform {
                let end = min(offset + patchListPageSize, patches.count)
                for patch in patches[offset..<end] {
                    request.reply(OSCMessage("/patch/item", [.int32(Int32(patch.number)), .string(patch.name)]))
                }
                request.reply(OSCMessage("/patch/end", [.int32(Int32(patches.count)),
                                                        .int32(end < patches.count ? Int32(end) : -1)]))
            }
        })

    static let patchLoad = OSCCommand(
        OSCCommandDescription(
            "/patch/load", section: .patches,
            summary: "Applies a patch, whole or not at all: every parameter it holds changes (subscribers get the "
                + "feedback), in two steps: everything but `/processing/enabled 1` in one batch (filter, ring modulator "
                + "and output values in one audio cycle), then, once the patch's preset is applied, `/processing/enabled 1`. "
                + "A load that cannot succeed is refused before anything changes; one that fails half-way requests every "
                + "value it put in place back to what it was before the load, and the current patch stays. A value another "
                + "client changes while the patch loads is that client's: it stays, and the patch reads as modified. Loads run one at a "
                + "time. While the session is deactivated (`/session/deactivate`), its filter, ring modulator and "
                + "output values apply at once and its `/processing/*` values wait for the next session, which gets them "
                + "first; `pending` says so until then. Without a JACK server (none yet, or one lost and not back) no "
                + "value can reach the audio: the load fails after the delivery timeout and changes nothing.",
            arguments: [Arg("i|s", "patch", "the patch number or name.")],
            reply: "`/patch/current ,i number ,s name ,i modified ,i pending` to the sender and to subscribers (again "
                + "when `pending` returns to 0), plus value feedback to subscribers for every parameter the patch changed.",
            errors: ["no patch with that number or name",
                     "the patch needs a hearing profile (its personalization preset) that is missing, or a preset variant the session's mode does not offer: nothing is changed",
                     "a value of the patch is refused now (e.g. enabling personalization while a hearing test interrupts it): nothing is changed",
                     "a value of the patch could not be applied (e.g. no JACK server): the values it changed are back to what they were before the load (the error says so, or what could not be restored)"],
            examples: ["oscsend localhost 7700 /patch/load i 0",
                       "oscsend localhost 7700 /patch/load s Transparent   # a factory patch by name (patches/00-transparent.json)"]),
        requests: [OSCMessageForm("/patch/load", .any)],
        replies: currentPatchReplies,
        prepare: { request in
            let keeper: StateKeeper, reference: PatchReference
            switch (stateKeeper(request), patchReference(request)) {
            case (.failure(let problem), _), (_, .failure(let problem)): return .reject(problem.reason)
            case (.success(let found), .success(let named)): (keeper, reference) = (found, named)
            }
            do {
                _ = try keeper.patchToLoad(reference)
            } catch {
                return .reject("\(error)")
            }
            return .perform {
                request.answerLater {
                    _ = try await keeper.loadPatch(reference)
                    request.reply(currentPatchMessage(keeper.currentPatch, pending: keeper.sessionValuesPending))
                }
            }
        })

    static let patchSave = OSCCommand(
        OSCCommandDescription(
            "/patch/save", section: .patches,
            summary: "Saves the current parameter state as a user patch.",
            arguments: [Arg("s", "name", "the patch name.")],
            reply: "`/patch/saved ,i number ,s name` (number < 0).",
            errors: ["empty name", "the patch could not be written to the state directory",
                     "a new name past the user patch bounds: at most 1000 patches (`--max-user-patches`) taking at most 16 MiB together (`--max-user-patch-bytes`); overwriting an existing name still works"],
            examples: ["oscsend localhost 7700 /patch/save s evening"]),
        requests: [OSCMessageForm("/patch/save", .any)],
        replies: [OSCMessageForm("/patch/saved", .any)],
        prepare: { request in
            let keeper: StateKeeper
            switch stateKeeper(request) {
            case .failure(let problem): return .reject(problem.reason)
            case .success(let found): keeper = found
            }
            guard request.arguments.count == 1, case .string(let name) = request.arguments[0] else {
                return .reject("expects ,s name")
            }
            do throws(PatchError) {
                try PatchName.validate(name)
            } catch {
                return .reject(error.description)
            }
            return .perform {
                do {
                    let patch = try keeper.savePatch(name: name)
                    request.reply(OSCMessage("/patch/saved", [.int32(Int32(patch.number)), .string(patch.name)]))
                } catch {
                    request.reject("\(error)")
                }
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
        prepare: { request in
            let keeper: StateKeeper, reference: PatchReference
            switch (stateKeeper(request), patchReference(request)) {
            case (.failure(let problem), _), (_, .failure(let problem)): return .reject(problem.reason)
            case (.success(let found), .success(let named)): (keeper, reference) = (found, named)
            }
            do throws(PatchError) {
                _ = try keeper.library.patchToDelete(reference)
            } catch {
                return .reject(error.description)
            }
            return .perform {
                do {
                    let patch = try keeper.deletePatch(reference)
                    request.reply(OSCMessage("/patch/deleted", [.int32(Int32(patch.number))]))
                } catch {
                    request.reject("\(error)")
                }
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
        prepare: { request in
            let keeper: StateKeeper
            switch stateKeeper(request) {
            case .failure(let problem): return .reject(problem.reason)
            case .success(let found): keeper = found
            }
            guard request.arguments.isEmpty else { return .reject("/patch/current takes no arguments") }
            return .perform {
                guard keeper.currentPatch != nil else {
                    request.reject("no patch is current: the current one was deleted (load or save one)")
                    return
                }
                request.reply(currentPatchMessage(keeper.currentPatch, pending: keeper.sessionValuesPending))
            }
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

    /// Why a patch command cannot be performed, found before its packet is performed.
    struct PatchCommandProblem: Error {
        let reason: String
    }

    static let noStateDirectory = PatchCommandProblem(reason: "patches are not available (no state directory)")

    /// `,i number` or `,s name`.
    private static func patchReference(_ request: OSCCommandRequest) -> Result<PatchReference, PatchCommandProblem> {
        let expected = PatchCommandProblem(reason: "expects ,i number or ,s name")
        guard request.arguments.count == 1 else { return .failure(expected) }
        switch request.arguments[0] {
        case .string(let name), .symbol(let name): return .success(.name(name))
        case let argument:
            guard let number = argument.integerValue else { return .failure(expected) }
            return .success(.number(number))
        }
    }

    /// The state keeper; absent without a state directory.
    private static func stateKeeper(_ request: OSCCommandRequest) -> Result<StateKeeper, PatchCommandProblem> {
        request.surface.stateKeeper.map { .success($0) } ?? .failure(noStateDirectory)
    }
}
