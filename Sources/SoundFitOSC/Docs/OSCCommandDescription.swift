/// One command or report of the OSC address space, as the documentation describes it. Each
/// entry of the surface's command table holds one; `OSCCommandDescription.all` lists them and
/// `OSCDocumentation` renders them.
public struct OSCCommandDescription: Sendable, Equatable {
    /// Where the command belongs in the documentation, in this order.
    public enum Section: String, Sendable, CaseIterable {
        case discovery = "Discovery and status"
        case subscriptions = "Subscriptions"
        case configuration = "Delivery configuration"
        case session = "Session"
        case profile = "Hearing profile"
        case patches = "Patches"
        case hearingTest = "Hearing test"
        case meters = "Response and meters"
        /// Messages SoundFit sends on its own, not requests.
        case reports = "Reports"
    }

    /// One argument, in message order.
    public struct Argument: Sendable, Equatable {
        /// OSC type tag(s): `s`, `i`, `f`, or alternatives such as `i|s`.
        public var type: String
        public var name: String
        public var summary: String
        public var isOptional: Bool
        /// This argument, and the ones after it, may repeat.
        public var repeats: Bool

        public init(_ type: String, _ name: String, _ summary: String,
                    optional: Bool = false, repeats: Bool = false) {
            self.type = type
            self.name = name
            self.summary = summary
            self.isOptional = optional
            self.repeats = repeats
        }

        /// `,s url`, `[,f settle_seconds]`.
        public var signature: String {
            let text = ",\(type) \(name)"
            return isOptional ? "[\(text)]" : text
        }
    }

    public var address: String
    public var section: Section
    public var summary: String
    public var arguments: [Argument]
    /// What the sender receives (for reports: when SoundFit sends it, and to whom).
    public var reply: String
    /// The `/error` cases, in words.
    public var errors: [String]
    /// Shell lines using liblo-tools (`oscsend`, `oscdump`).
    public var examples: [String]

    public init(_ address: String, section: Section, summary: String, arguments: [Argument] = [],
                reply: String, errors: [String] = [], examples: [String]) {
        self.address = address
        self.section = section
        self.summary = summary
        self.arguments = arguments
        self.reply = reply
        self.errors = errors
        self.examples = examples
    }

    /// `/config/delivery ,s style [,f settle_seconds]`; repeated groups end in `…`.
    public var signature: String {
        let parts = [address] + arguments.map(\.signature) + (arguments.contains(where: \.repeats) ? ["…"] : [])
        return parts.joined(separator: " ")
    }
}
