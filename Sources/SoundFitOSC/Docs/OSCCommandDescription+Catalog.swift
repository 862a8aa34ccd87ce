extension OSCCommandDescription {
    /// Every command of the OSC contract (DESIGN.md, v1) and the reports SoundFit sends, in
    /// documentation order. The contract's names are stable: extend, never rename.
    public static let all: [OSCCommandDescription] = discovery + subscriptions + configuration + session
        + profile + patches + reports

    private typealias Arg = Argument

    private static let discovery: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/ping", section: .discovery,
            summary: "Liveness check. Any arguments are echoed back.",
            reply: "`/pong` with the request's arguments.",
            examples: ["oscsend localhost 7700 /ping"]),
        OSCCommandDescription(
            "/list", section: .discovery,
            summary: "Describes every parameter: type, access, range, default and unit.",
            reply: "One `/list/param ,s address ,s type ,s access <min> <max> <default> ,s unit` per parameter "
                + "(for strings a single `,s choices`, space-separated, instead of min and max), "
                + "then `/list/end ,i count`.",
            examples: ["oscsend localhost 7700 /list"]),
        OSCCommandDescription(
            "/status", section: .discovery,
            summary: "Engine and connection status.",
            reply: "`/status` followed by key/value pairs (`,s key <value>` each): connected, server, client, "
                + "sample_rate, buffer_size, xruns, callback_load, callback timing percentiles, session, "
                + "cycles, version, …",
            examples: ["oscsend localhost 7700 /status"]),
    ]

    private static let subscriptions: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/subscribe", section: .subscriptions,
            summary: "Keeps a surface in sync. Subscribing an address again changes its feedback form. "
                + "At most \(SubscriberRegistry.defaultCapacity) subscriptions; a subscriber whose sends fail "
                + "\(SubscriberRegistry.defaultMaximumConsecutiveFailures) times in a row is dropped.",
            arguments: [
                Arg("s", "url", "`osc.udp://host:port` to send to (IPv4 address or localhost); default: the sender's address and port.",
                    optional: true),
                Arg("s", "feedback", "`native` (default): `<address> <value>`; `normalized`: `<address>/normalized ,f position`; `both`.",
                    optional: true),
            ],
            reply: "`/subscribed ,s url ,s feedback`, then the current value of every parameter in that form "
                + "(a snapshot). Afterwards: value feedback for every applied change made by another client "
                + "(never echoed to the client that made it), the terminal `/state` of those changes, and "
                + "session changes. Feedback is coalesced per subscriber: the latest value of each address wins, "
                + "so a flood of changes never builds a queue.",
            errors: [
                "the URL is malformed, not `osc.udp://` (TCP and Unix sockets are not supported), names a host "
                    + "that is not an IPv4 address or localhost, or a port outside 1…65535",
                "unknown feedback form (expected native, normalized or both)",
                "the subscriber limit is reached",
                "the URL is SoundFit's own OSC port (SoundFit would send its feedback to itself)",
                "the URL was subscribed by another client: only that client, or a client on the subscriber's host, "
                    + "may change it",
            ],
            examples: [
                "oscdump 9000 &",
                "oscsend localhost 7700 /subscribe s osc.udp://127.0.0.1:9000",
                "oscsend localhost 7700 /subscribe ss osc.udp://127.0.0.1:9000 normalized",
            ]),
        OSCCommandDescription(
            "/unsubscribe", section: .subscriptions,
            summary: "Stops feedback.",
            arguments: [
                Arg("s", "url", "the subscription to remove; default: the sender's own subscription and the ones it made.",
                    optional: true),
            ],
            reply: "`/unsubscribed ,s url` for each removed subscription.",
            errors: [
                "not subscribed",
                "the URL was subscribed by another client (only that client, or a client on the subscriber's host, "
                    + "may remove it)",
                "the URL is malformed",
            ],
            examples: ["oscsend localhost 7700 /unsubscribe s osc.udp://127.0.0.1:9000"]),
    ]

    private static let configuration: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/config/delivery", section: .configuration,
            summary: "How changes are delivered: `continuous` applies each value as it arrives (values of "
                + "filter, ring modulator and output parameters stream to the audio thread without waiting for "
                + "one another, up to 8 in flight; one the audio thread skipped for a newer one ends "
                + "`superseded`); `discrete` applies a value only once it has stayed unchanged for the settle "
                + "time (older values end `superseded`). Without arguments, queries.",
            arguments: [
                Arg("s", "style", "`continuous` or `discrete`.", optional: true),
                Arg("f", "settle_seconds", "discrete only: the settle time (default 0.2).", optional: true),
            ],
            reply: "`/config/delivery ,s style ,f settle_seconds`.",
            errors: [
                "unknown style",
                "settle time not a finite number > 0 and ≤ 10 s, or given with `continuous`",
            ],
            examples: [
                "oscsend localhost 7700 /config/delivery sf discrete 0.2",
                "oscsend localhost 7700 /config/delivery s continuous",
            ]),
        OSCCommandDescription(
            "/config/timeout", section: .configuration,
            summary: "How long a change may take to be applied before it ends `failed` (default 10 s). "
                + "Without arguments, queries.",
            arguments: [Arg("f", "seconds", "the apply timeout.", optional: true)],
            reply: "`/config/timeout ,f seconds`.",
            errors: ["not a finite number > 0"],
            examples: ["oscsend localhost 7700 /config/timeout f 2"]),
    ]

    private static let session: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/session", section: .session,
            summary: "The processing session, which exists while SoundFit is connected to a JACK server.",
            reply: "`/session ,s active|inactive [,s mode ,i tech_level]`.",
            examples: ["oscsend localhost 7700 /session"]),
        OSCCommandDescription(
            "/session/activate", section: .session,
            summary: "Starts a session for a processor. Values of the previous session are re-applied.",
            arguments: [
                Arg("s", "mode", "`fine_tuning` (preset variants default, up, down) or `single_preset` (default only)."),
                Arg("i", "tech_level", "the processor's tech level, 1…4."),
            ],
            reply: "`/session ,s active ,s mode ,i tech_level`; subscribers get the same.",
            errors: [
                "unknown mode",
                "tech level outside 1…4",
                "a session is already active (deactivate it first)",
                "not connected to a JACK server",
            ],
            examples: ["oscsend localhost 7700 /session/activate si fine_tuning 4"]),
        OSCCommandDescription(
            "/session/deactivate", section: .session,
            summary: "Ends the session; its values are kept for the next one.",
            reply: "`/session ,s inactive`; subscribers get the same.",
            examples: ["oscsend localhost 7700 /session/deactivate"]),
        OSCCommandDescription(
            "/session/interrupt", section: .session,
            summary: "Starts an interruption: processing is switched off and enabling it fails until every "
                + "interruption is resolved. Several reasons may be active at once.",
            arguments: [Arg("s", "reason", "a name for the interruption.")],
            reply: "`/session/interrupted ,i 1`; subscribers get the same.",
            errors: ["missing reason"],
            examples: ["oscsend localhost 7700 /session/interrupt s phone_call"]),
        OSCCommandDescription(
            "/session/resolve", section: .session,
            summary: "Ends an interruption. When the last one ends, processing returns to the state it was "
                + "meant to have. Resolving a reason that is not active changes nothing.",
            arguments: [Arg("s", "reason", "the name given to `/session/interrupt`.")],
            reply: "`/session/interrupted ,i 0|1` (1 while other interruptions remain); subscribers get the same.",
            errors: ["missing reason"],
            examples: ["oscsend localhost 7700 /session/resolve s phone_call"]),
    ]

    private static let profile: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/profile/audiogram", section: .profile,
            summary: "Sets the listener's hearing thresholds and generates the personalization presets for the "
                + "active session's tech level.",
            arguments: [
                Arg("s", "ear", "`left`, `right` or `both`."),
                Arg("f", "hz", "a standard audiometric frequency (125 … 8000 Hz); 500, 1000, 2000 and 4000 are required.",
                    repeats: true),
                Arg("f", "db_hl", "the threshold at that frequency, −10 … 120 dB HL.", repeats: true),
            ],
            reply: "`/profile/presets ,s variant …`: the preset variants now available.",
            errors: [
                "unknown ear",
                "frequencies and levels not in pairs",
                "a nonstandard or repeated frequency, a required one missing, or a level out of range",
                "no session is active",
            ],
            examples: ["oscsend localhost 7700 /profile/audiogram sffffffff both 500 20 1000 25 2000 40 4000 55"]),
    ]

    private static let patches: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/patch/list", section: .patches,
            summary: "Lists factory patches (number ≥ 0) and user patches (number < 0).",
            reply: "`/patch/item ,i number ,s name` for each patch, then `/patch/end ,i count`.",
            examples: ["oscsend localhost 7700 /patch/list"]),
        OSCCommandDescription(
            "/patch/load", section: .patches,
            summary: "Applies a patch: every parameter it holds changes (subscribers get the feedback).",
            arguments: [Arg("i|s", "patch", "the patch number or name.")],
            reply: "`/patch/current ,i number ,s name ,i modified` to the sender and to subscribers, plus value feedback to subscribers for every parameter the patch changed.",
            errors: ["no patch with that number or name",
                     "the patch needs a hearing profile (its personalization preset) or a processing session that is missing: nothing is changed",
                     "a parameter of the patch could not be applied (e.g. no JACK server)"],
            examples: ["oscsend localhost 7700 /patch/load i 0", "oscsend localhost 7700 /patch/load s bright"]),
        OSCCommandDescription(
            "/patch/save", section: .patches,
            summary: "Saves the current parameter state as a user patch.",
            arguments: [Arg("s", "name", "the patch name.")],
            reply: "`/patch/saved ,i number ,s name` (number < 0).",
            errors: ["empty name", "the patch could not be written to the state directory"],
            examples: ["oscsend localhost 7700 /patch/save s evening"]),
        OSCCommandDescription(
            "/patch/delete", section: .patches,
            summary: "Deletes a user patch.",
            arguments: [Arg("i", "number", "a user patch number (< 0).")],
            reply: "`/patch/deleted ,i number`.",
            errors: ["factory patches (number ≥ 0) cannot be deleted", "no user patch with that number"],
            examples: ["oscsend localhost 7700 /patch/delete i -1"]),
        OSCCommandDescription(
            "/patch/current", section: .patches,
            summary: "The patch loaded or saved last, and whether any parameter changed since (modified 0/1).",
            reply: "`/patch/current ,i number ,s name ,i modified`.",
            errors: ["no patch has been loaded or saved yet"],
            examples: ["oscsend localhost 7700 /patch/current"]),
    ]

    private static let reports: [OSCCommandDescription] = [
        OSCCommandDescription(
            "/state", section: .reports,
            summary: "What happened to a parameter change.",
            arguments: [
                Arg("s", "address", "the parameter's own address (also for changes sent in the `/normalized` form)."),
                Arg("s", "state", "`pending` (waiting: discrete delivery settling, or behind the changes in "
                    + "flight), `applying`, or a terminal state: `applied` (the audio thread has taken the value), "
                    + "`failed` or `superseded` (a newer value replaced it before the audio thread took it)."),
                Arg("s|f|i", "value", "the requested value, in native units."),
                Arg("s", "error", "with `failed`: why.", optional: true),
                Arg("i", "request_id", "the request id the set carried, if any.", optional: true),
            ],
            reply: "To the sender of a change, for each state its request goes through; every accepted set "
                + "ends in exactly one terminal state. Subscribers receive the latest terminal state of each "
                + "parameter, without request id.",
            examples: ["oscsend localhost 7700 /filter/cutoff fi 2500 42    # its /state reports end in ,i 42"]),
        OSCCommandDescription(
            "/error", section: .reports,
            summary: "A rejected request. Nothing changed.",
            arguments: [
                Arg("s", "address", "the request's address (empty when the packet could not be decoded)."),
                Arg("s", "message", "what was wrong."),
            ],
            reply: "To the sender of anything rejected: unknown address, wrong type or arity, out-of-range "
                + "value (rejected, never clamped), read-only parameter, or an operation not allowed now "
                + "(no session, interrupted).",
            examples: ["oscsend localhost 7700 /filter/cutoff f 5    # /error /filter/cutoff \"/filter/cutoff: 5.0 is out of range 20.0…20000.0\""]),
    ]
}
