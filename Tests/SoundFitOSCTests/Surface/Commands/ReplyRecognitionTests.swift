@testable import SoundFitOSC
import Testing

/// The reply recogniser derives from the reply and request forms of the command table; it must
/// decide exactly as the hand-written rules it replaced.
@Suite struct ReplyRecognitionTests {
    /// The rules as they were written before the table declared reply forms.
    private static func wasReply(_ message: OSCMessage) -> Bool {
        let replyOnly: Set<String> = [
            "/error", "/pong", "/subscribed", "/unsubscribed", "/list/param", "/list/end",
            "/patch/item", "/patch/end", "/patch/saved", "/patch/deleted", "/profile/presets",
            "/session/interrupted",
        ]
        if replyOnly.contains(message.address) { return true }
        if ["/session", "/status", "/patch/current"].contains(message.address) { return !message.arguments.isEmpty }
        switch message.address {
        case "/state": return message.arguments.count >= 2
        case "/config/delivery":
            if message.arguments.count == 2, case .string("continuous") = message.arguments[0] { return true }
            return false
        default: return false
        }
    }

    static let addresses: [String] = {
        let table = OSCCommandTable.entries.flatMap { [$0.address] + ($0.replyForms + $0.requestForms).map(\.address) }
        return Array(Set(table)).sorted() + ["/filter/cutoff", "/filter/cutoff/normalized", "/nothing"]
    }()

    static let argumentLists: [[OSCArgument]] = [
        [], [.int32(1)], [.float(0)], [.string("x")], [.symbol("continuous")],
        [.string("continuous")], [.string("discrete")],
        [.string("continuous"), .float(0)], [.string("continuous"), .int32(0)], [.string("continuous"), .string("x")],
        [.string("discrete"), .float(0.2)], [.string("discrete"), .string("x")], [.string("other"), .float(1)],
        [.int32(1), .float(2)], [.string("a"), .string("b")], [.string("/filter/cutoff"), .string("applied"), .float(5000)],
        [.string("continuous"), .float(0), .float(1)], [.int32(0), .string("Transparent"), .int32(0)],
    ]

    @Test func theTableDecidesExactlyAsTheRulesItReplaced() {
        for address in Self.addresses {
            for arguments in Self.argumentLists {
                let message = OSCMessage(address, arguments)
                #expect(OSCCommandTable.isReply(message) == Self.wasReply(message), "\(message)")
            }
        }
    }

    @Test func everyReplySoundFitSendsIsRecognisedUnlessItIsAlsoARequest() {
        let sent: [OSCMessage] = [
            OSCMessage("/pong", [.int32(7)]),
            OSCMessage("/list/end", [.int32(14)]),
            OSCMessage("/status", [.string("connected"), .int32(1)]),
            OSCMessage("/session", [.string("inactive")]),
            OSCMessage("/session/interrupted", [.int32(1)]),
            OSCMessage("/config/delivery", [.string("continuous"), .float(0)]),
            OSCMessage("/patch/current", [.int32(0), .string("Transparent"), .int32(0)]),
            OSCMessage("/state", [.string("/filter/q"), .string("applied"), .float(3), .int32(42)]),
            OSCMessage("/error", [.string("/nothing"), .string("unknown address /nothing")]),
        ]
        for message in sent {
            #expect(OSCCommandTable.isReply(message), "\(message)")
        }
        // Same form as a request: answered (discrete delivery with a settle time, a timeout, a value).
        for message in [OSCMessage("/config/delivery", [.string("discrete"), .float(0.2)]),
                        OSCMessage("/config/timeout", [.float(2)]), OSCMessage("/session"),
                        OSCMessage("/filter/cutoff", [.float(1000)])] {
            #expect(!OSCCommandTable.isReply(message), "\(message)")
        }
    }
}
