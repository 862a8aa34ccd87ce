import OSCCore

/// One entry of the OSC command table: the address, the message forms it accepts and the
/// ones it sends, what it does, and how the documentation describes it, in one place.
/// Reports (`/state`, `/error`) are entries without requests or a `prepare` step.
struct OSCCommand: Sendable {
    /// The documentation entry (address, arguments, reply, errors, examples) that docs/OSC.md
    /// is generated from.
    let documentation: OSCCommandDescription
    /// What the command accepts; its `prepare` step validates the arguments exactly.
    let requestForms: [OSCMessageForm]
    /// What the command sends back. A received message matching one of these and none of the
    /// request forms can only be a reply, and is never answered.
    let replyForms: [OSCMessageForm]
    /// Checks one request and says what performing it will do, before anything of its packet is
    /// performed (so one invalid element of a bundle stops all of it). Runs on a transport's
    /// receive thread; the plan's work runs there too, slow work goes to a task.
    let prepare: (@Sendable (OSCCommandRequest) -> OSCCommandPlan)?

    var address: String { documentation.address }

    /// A command whose arguments are checked before its packet is performed.
    init(_ documentation: OSCCommandDescription, requests: [OSCMessageForm], replies: [OSCMessageForm],
         prepare: @escaping @Sendable (OSCCommandRequest) -> OSCCommandPlan) {
        self.documentation = documentation
        requestForms = requests
        replyForms = replies
        self.prepare = prepare
    }

    /// A report SoundFit sends on its own: documented, recognised as a reply, never handled.
    init(report documentation: OSCCommandDescription, sends replies: [OSCMessageForm]) {
        self.documentation = documentation
        requestForms = []
        replyForms = replies
        prepare = nil
    }
}

/// What a command will do with one request, decided before its packet is performed.
enum OSCCommandPlan: Sendable {
    /// The request is valid: `work` answers it when the packet is performed.
    case perform(_ work: @Sendable () -> Void)
    /// Answered with `/error ,s address ,s reason`; nothing is performed.
    case reject(_ reason: String)
}

/// One command message being answered: what a command's `prepare` step and its work use.
struct OSCCommandRequest: Sendable {
    let message: OSCMessage
    let sender: OSCSender
    let surface: OSCControlSurface

    var address: String { message.address }
    var arguments: [OSCArgument] { message.arguments }

    /// Sends `reply` to the request's sender, over the transport the request came from.
    func reply(_ reply: OSCMessage) {
        surface.replies.send(reply, to: sender)
    }

    /// Answers `/error ,s address ,s reason`.
    func reject(_ reason: String) {
        surface.replies.reject(message.address, reason, to: sender)
    }

    /// Runs `work` in a task and answers its error, if any, with `/error`. The request is under
    /// way (for `/sync`) until then.
    func answerLater(_ work: @escaping @Sendable () async throws -> Void) {
        let ticket = surface.pending.begin(sender)
        Task { [surface] in
            defer { surface.pending.end(ticket) }
            do {
                try await work()
            } catch {
                reject("\(error)")
            }
        }
    }
}
