/// `/state` and `/error`: messages SoundFit sends on its own (and `/state ,s address`, a query).
extension OSCCommandTable {
    static let reports = [state, invalidated, error]

    /// `/state ,s address ,s state <value> [,s error] [,i request_id]`; with exactly one argument,
    /// `/state ,s address` is a query of that parameter's current update state.
    static let state = OSCCommand(
        OSCCommandDescription(
            "/state", section: .reports,
            summary: "What happened to a parameter change. Sent by SoundFit; `/state ,s address` (exactly one "
                + "argument) asks for a parameter's current update state (its latest change's, `applied` when "
                + "nothing is in flight) and is answered in the same form, without request id.",
            arguments: [
                Arg("s", "address", "the parameter's own address (also for changes sent in the `/normalized` form)."),
                Arg("s", "state", "`pending` (waiting: discrete delivery settling, or behind the changes in "
                    + "flight), `applying`, or a terminal state: `applied` (the audio thread has taken the value "
                    + "and, with a state directory, it is in the state journal, so a `kill -9` cannot lose it), "
                    + "`failed` or `superseded` (a newer value replaced it before the audio thread took it)."),
                Arg("s|f|i", "value", "the requested value, in native units."),
                Arg("s", "error", "with `failed`: why; with `applied` to subscribers: `not persisted: <reason>` "
                    + "when the state could not be written.", optional: true),
                Arg("i", "request_id", "the request id the set carried, if any.", optional: true),
            ],
            reply: "To the sender of a change, for each state its request goes through; every accepted set "
                + "ends in exactly one terminal state. Subscribers receive the latest terminal state of each "
                + "parameter, without request id.",
            examples: [
                "oscsend localhost 7700 /filter/cutoff fi 2500 42    # its /state reports end in ,i 42",
                "oscsend localhost 7700 /state s /filter/cutoff      # /state /filter/cutoff applied 2500",
            ]),
        requests: [OSCMessageForm("/state", .exactly([.string()]))],
        replies: [OSCMessageForm("/state", .atLeast(2))],
        prepare: { request in
            guard request.arguments.count == 1, case .string(let address) = request.arguments[0] else {
                return .reject("expects ,s address")
            }
            return .perform { request.surface.parameters.answerState(of: address, to: request.sender) }
        })

    /// `/error ,s address ,s message`.
    static let error = OSCCommand(
        report:
        OSCCommandDescription(
            "/error", section: .reports,
            summary: "A rejected request. Nothing changed.",
            arguments: [
                Arg("s", "address", "the request's address (empty when the packet could not be decoded)."),
                Arg("s", "message", "what was wrong."),
            ],
            reply: "To the sender of anything rejected: unknown address, wrong type or arity, out-of-range "
                + "value (rejected, never clamped), read-only parameter, or an operation not allowed now "
                + "(no session, interrupted). One exception: `/error ,s address ,s \"not persisted: <reason>\"` "
                + "right after a change's `/state … applied` says the change applied to the audio but the "
                + "state could not be written (full disk, read-only, I/O error), so a restart would lose it; "
                + "`/status` reports `persisted 0` until a write succeeds again.",
            examples: ["oscsend localhost 7700 /filter/cutoff f 5    # /error /filter/cutoff \"/filter/cutoff: 5.0 is out of range 20.0…20000.0\""]),
        sends: [OSCMessageForm("/error", .any)])
}
