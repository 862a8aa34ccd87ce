import OSCCore
import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime

/// `/session`, `/session/activate`, `/session/deactivate`, `/session/interrupt`, `/session/resolve`,
/// and the `/invalidated` report (listed with the reports).
extension OSCCommandTable {
    static let session = [sessionQuery, activate, deactivate, interrupt, resolve]

    /// `/session ,s active|inactive [,s mode ,i tech_level]`: the reply of every session command.
    static let sessionReplies = [
        OSCMessageForm("/session", .exactly([.string(oneOf: ["inactive"])])),
        OSCMessageForm("/session", .exactly([.string(oneOf: ["active"]), .string(oneOf: ["fine_tuning", "single_preset"]),
                                             .int])),
    ]

    static let sessionQuery = OSCCommand(
        OSCCommandDescription(
            "/session", section: .session,
            summary: "The processing session, which exists while SoundFit is connected to a JACK server.",
            reply: "`/session ,s active|inactive [,s mode ,i tech_level]`.",
            examples: ["oscsend localhost 7700 /session"]),
        requests: [.bare("/session")],
        replies: sessionReplies,
        prepare: { request in
            guard request.arguments.isEmpty else {
                return .reject("/session takes no arguments (use /session/activate or /session/deactivate)")
            }
            return .perform { request.reply(request.surface.sessionMessage()) }
        })

    static let activate = OSCCommand(
        OSCCommandDescription(
            "/session/activate", section: .session,
            summary: "Starts a session for a processor. Values of the previous session are re-applied; a "
                + "personalization preset made for another tech level or mode is generated again from the hearing "
                + "profile for the new one (the same variant, or `default` when the mode does not offer it). "
                + "Session requests (`/session/activate`, `/session/deactivate`, from any client) run one at a time "
                + "in the order they arrived, and each is answered with its own outcome: an activation followed by "
                + "a deactivation is answered `/session active …`, then `/session inactive`.",
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
                "16 session requests are already waiting",
            ],
            examples: ["oscsend localhost 7700 /session/activate si fine_tuning 4"]),
        requests: [OSCMessageForm("/session/activate", .any)],
        replies: sessionReplies,
        prepare: prepareActivate)

    /// `/session/activate ,s fine_tuning|single_preset ,i tech_level`.
    private static func prepareActivate(_ request: OSCCommandRequest) -> OSCCommandPlan {
        let arguments = request.arguments
        guard arguments.count == 2, case .string(let mode) = arguments[0], let level = arguments[1].integerValue else {
            return .reject("expects ,s fine_tuning|single_preset ,i tech_level")
        }
        let techLevel: TechLevel
        do {
            techLevel = try TechLevel(level)
        } catch {
            return .reject("\(error)")
        }
        let configuration: ProcessingConfiguration
        switch mode {
        case "fine_tuning": configuration = .fineTuning(techLevel: techLevel)
        case "single_preset": configuration = .singlePreset(techLevel: techLevel)
        default:
            return .reject("unknown personalization mode '\(mode)' (fine_tuning or single_preset)")
        }
        return .perform {
            // Answered inside the activation's turn: with this session's configuration, before any
            // session request that arrived later runs.
            request.surface.runtime.activateSession(configuration) { outcome in
                switch outcome {
                case .success(let session):
                    request.reply(OSCMessage("/session", [.string("active")]
                                             + OSCControlSurface.configurationArguments(session.configuration)))
                case .failure(let error):
                    request.reject("\(error)")
                }
            }
        }
    }

    static let deactivate = OSCCommand(
        OSCCommandDescription(
            "/session/deactivate", section: .session,
            summary: "Ends the session; its values are kept for the next one. Runs in arrival order with "
                + "`/session/activate` (see there).",
            reply: "`/session ,s inactive`; subscribers get the same.",
            errors: ["any argument (it takes none)", "16 session requests are already waiting"],
            examples: ["oscsend localhost 7700 /session/deactivate"]),
        requests: [OSCMessageForm("/session/deactivate", .any)],
        replies: sessionReplies,
        prepare: { request in
            guard request.arguments.isEmpty else { return .reject("/session/deactivate takes no arguments") }
            return .perform {
                request.surface.runtime.deactivateSession { error in
                    if let error {
                        request.reject("\(error)")
                    } else {
                        request.reply(OSCMessage("/session", [.string("inactive")]))
                    }
                }
            }
        })

    /// `/invalidated ,s address … ,s cause`: sent to subscribers, never answered.
    static let invalidated = OSCCommand(
        report:
        OSCCommandDescription(
            "/invalidated", section: .reports,
            summary: "Values a subscriber holds can no longer be relied on: query them again. Sent to subscribers "
                + "when an event makes values stale, after SoundFit re-applied its own state; never answered.",
            arguments: [
                Arg("s", "address", "a stale parameter's address (starts with `/`); one or more of them, each its own argument."),
                Arg("s", "cause", "why, always the last argument: `hearing_profile_replaced` (preset, can_enable), "
                    + "`tech_level_changed` (preset, can_enable, fitting), `calibration_changed` (preset), "
                    + "`server_lost_and_back` or `sample_rate_changed` (every parameter)."),
            ],
            reply: "To subscribers. Notifications of one cause coalesce like value feedback.",
            examples: ["oscsend localhost 7700 /session/activate si fine_tuning 4    # after tech level 3, subscribers get "
                + "/invalidated /processing/preset /processing/can_enable /processing/fitting tech_level_changed"]),
        sends: [OSCMessageForm("/invalidated", .any)])

    /// `,i 0|1`: whether interruptions remain.
    static let interruptedReply = OSCMessageForm("/session/interrupted", .any)

    static let interrupt = OSCCommand(
        OSCCommandDescription(
            "/session/interrupt", section: .session,
            summary: "Starts an interruption: processing is switched off and enabling it fails until every "
                + "interruption is resolved. Several reasons may be active at once.",
            arguments: [Arg("s", "reason", "a name for the interruption.")],
            reply: "`/session/interrupted ,i 1`; subscribers get the same.",
            errors: ["missing reason", "a reason longer than 128 bytes", "more than 16 interruptions active at once"],
            examples: ["oscsend localhost 7700 /session/interrupt s phone_call"]),
        requests: [OSCMessageForm("/session/interrupt", .any)],
        replies: [interruptedReply],
        prepare: { request in
            interruption(request) { session, reason in try await session.interrupt(reason: reason) }
        })

    static let resolve = OSCCommand(
        OSCCommandDescription(
            "/session/resolve", section: .session,
            summary: "Ends an interruption. When the last one ends, processing returns to the state it was "
                + "meant to have. Resolving a reason that is not active changes nothing.",
            arguments: [Arg("s", "reason", "the name given to `/session/interrupt`.")],
            reply: "`/session/interrupted ,i 0|1` (1 while other interruptions remain); subscribers get the same.",
            errors: ["missing reason"],
            examples: ["oscsend localhost 7700 /session/resolve s phone_call"]),
        requests: [OSCMessageForm("/session/resolve", .any)],
        replies: [interruptedReply],
        prepare: { request in
            interruption(request) { session, reason in try await session.resolve(interruption: reason) }
        })

    /// `/session/interrupt ,s reason` and `/session/resolve ,s reason` → `/session/interrupted ,i 0|1`,
    /// to the sender and to subscribers.
    private static func interruption(_ request: OSCCommandRequest,
                                     _ operation: @escaping @Sendable (ProcessingSession, String) async throws -> Bool)
        -> OSCCommandPlan {
        guard request.arguments.count == 1, case .string(let reason) = request.arguments[0], !reason.isEmpty else {
            return .reject("expects one non-empty string: the interruption reason")
        }
        let surface = request.surface
        guard let session = surface.runtime.controller.session else {
            return .reject("no processing session is active")
        }
        return .perform {
            request.answerLater {
                let interrupted = try await operation(session, reason)
                let reply = OSCMessage("/session/interrupted", [.int32(interrupted ? 1 : 0)])
                request.reply(reply)
                surface.feedback.enqueue { $0.enqueueNotification(reply, origin: request.sender.peer) }
            }
        }
    }
}
