/// One entry of the OSC command table: the address, the message forms it accepts and the
/// ones it sends, what it does, and how the documentation describes it, in one place.
/// Reports (`/state`, `/error`) are entries without requests or a handler.
struct OSCCommand: Sendable {
    /// The documentation entry (address, arguments, reply, errors, examples) that docs/OSC.md
    /// is generated from.
    let documentation: OSCCommandDescription
    /// What the command accepts; the handler validates the arguments exactly.
    let requestForms: [OSCMessageForm]
    /// What the command sends back. A received message matching one of these and none of the
    /// request forms can only be a reply, and is never answered.
    let replyForms: [OSCMessageForm]
    /// Answers one request. Runs on a transport's receive thread; slow work goes to a task.
    let handle: (@Sendable (OSCCommandRequest) -> Void)?

    var address: String { documentation.address }

    init(_ documentation: OSCCommandDescription, requests: [OSCMessageForm], replies: [OSCMessageForm],
         handle: @escaping @Sendable (OSCCommandRequest) -> Void) {
        self.documentation = documentation
        requestForms = requests
        replyForms = replies
        self.handle = handle
    }

    /// A report SoundFit sends on its own: documented, recognised as a reply, never handled.
    init(report documentation: OSCCommandDescription, sends replies: [OSCMessageForm]) {
        self.documentation = documentation
        requestForms = []
        replyForms = replies
        handle = nil
    }
}

/// One command message being answered: what a handler works with.
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

    /// Runs `work` in a task and answers its error, if any, with `/error`.
    func answerLater(_ work: @escaping @Sendable () async throws -> Void) {
        Task {
            do {
                try await work()
            } catch {
                reject("\(error)")
            }
        }
    }
}
