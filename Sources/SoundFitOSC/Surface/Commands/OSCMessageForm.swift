import OSCCore

/// The shape of a message at one address: what a command accepts (its request forms) or what
/// it sends (its reply forms). Request forms are loose (the handler validates the arguments
/// exactly and answers `/error`); reply forms at an address that requests use too are exact,
/// so a malformed request there is answered, not taken for a reply.
struct OSCMessageForm: Sendable, CustomStringConvertible {
    /// What the arguments may be.
    enum Arguments: Sendable {
        /// Any arguments, none included.
        case any
        /// At least this many arguments, of any type.
        case atLeast(Int)
        /// Exactly these arguments, in order.
        case exactly([Argument])
        /// At least one argument, the last one this string: a reply that ends in a unit or marker
        /// (`,s dB HL`) no request of its address ends in, so it is never taken for one.
        case endingIn(String)
        /// Any arguments but those of `endingIn` this string: the requests of such an address.
        case notEndingIn(String)
    }

    /// One argument of an `exactly` form.
    enum Argument: Sendable {
        /// Any type.
        case any
        /// A string (type tag `s`), one of these values when given.
        case string(oneOf: Set<String>? = nil)
        /// A float (`f`).
        case float
        /// A float (`f`) with this value.
        case floatValue(Float)
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
        case .endingIn(let marker): return message.arguments.last == .string(marker)
        case .notEndingIn(let marker): return message.arguments.last != .string(marker)
        }
    }

    var description: String {
        switch arguments {
        case .any: "\(address) …"
        case .atLeast(let count): "\(address) (\(count)+ arguments)"
        case .exactly(let expected): ([address] + expected.map(\.description)).joined(separator: " ")
        case .endingIn(let marker): "\(address) … ,s \(marker)"
        case .notEndingIn(let marker): "\(address) … (not ending in ,s \(marker))"
        }
    }
}

extension OSCMessageForm.Argument: CustomStringConvertible {
    func matches(_ argument: OSCArgument) -> Bool {
        switch (self, argument) {
        case (.any, _): true
        case (.string(let values), .string(let text)): values?.contains(text) ?? true
        case (.float, .float), (.int, .int32): true
        case (.floatValue(let expected), .float(let value)): value == expected
        default: false
        }
    }

    var description: String {
        switch self {
        case .any: ",?"
        case .string(let values): values.map { ",s \($0.sorted().joined(separator: "|"))" } ?? ",s"
        case .float: ",f"
        case .floatValue(let value): ",f \(value)"
        case .int: ",i"
        }
    }
}
