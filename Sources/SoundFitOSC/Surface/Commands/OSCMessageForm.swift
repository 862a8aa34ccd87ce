/// The shape of a message at one address: what a command accepts (its request forms) or what
/// it sends (its reply forms). Forms are loose on purpose: they decide which handler a message
/// goes to and whether it can only be a reply; the handler validates the arguments exactly.
struct OSCMessageForm: Sendable, CustomStringConvertible {
    /// What the arguments may be.
    enum Arguments: Sendable {
        /// Any arguments, none included.
        case any
        /// At least this many arguments, of any type.
        case atLeast(Int)
        /// Exactly these arguments, in order.
        case exactly([Argument])
    }

    /// One argument of an `exactly` form.
    enum Argument: Sendable {
        /// Any type.
        case any
        /// A string (type tag `s`), one of these values when given.
        case string(oneOf: Set<String>? = nil)
        /// A float (`f`).
        case float
        /// An int (`i`).
        case int
    }

    var address: String
    var arguments: Arguments

    init(_ address: String, _ arguments: Arguments) {
        self.address = address
        self.arguments = arguments
    }

    /// `address` without arguments.
    static func bare(_ address: String) -> OSCMessageForm { OSCMessageForm(address, .exactly([])) }

    func matches(_ message: OSCMessage) -> Bool {
        guard message.address == address else { return false }
        switch arguments {
        case .any: return true
        case .atLeast(let count): return message.arguments.count >= count
        case .exactly(let expected):
            return message.arguments.count == expected.count
                && zip(expected, message.arguments).allSatisfy { $0.matches($1) }
        }
    }

    var description: String {
        switch arguments {
        case .any: "\(address) …"
        case .atLeast(let count): "\(address) (\(count)+ arguments)"
        case .exactly(let expected): ([address] + expected.map(\.description)).joined(separator: " ")
        }
    }
}

extension OSCMessageForm.Argument: CustomStringConvertible {
    func matches(_ argument: OSCArgument) -> Bool {
        switch (self, argument) {
        case (.any, _): true
        case (.string(let values), .string(let text)): values?.contains(text) ?? true
        case (.float, .float), (.int, .int32): true
        default: false
        }
    }

    var description: String {
        switch self {
        case .any: ",?"
        case .string(let values): values.map { ",s \($0.sorted().joined(separator: "|"))" } ?? ",s"
        case .float: ",f"
        case .int: ",i"
        }
    }
}
