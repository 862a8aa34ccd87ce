import OSCCore
@testable import SoundFitOSC
import Testing

/// The reply recogniser derives from the reply and request forms of the command table; it
/// decides as the hand-written rules it replaced, except that a malformed request at an address
/// that is also a reply (`/session ,i 1`, `/config/delivery ,s continuous ,f 0.3`) is answered
/// with `/error` instead of being taken for a reply.
@Suite struct ReplyRecognitionTests {
    /// The rules as they were written before the table declared reply forms, with the exact reply
    /// forms of `/session`, `/patch/current` and `/config/delivery`.
    private static func wasReply(_ message: OSCMessage) -> Bool {
        let arguments = message.arguments
        switch message.address {
        case "/session":
            return arguments == [.string("inactive")] || arguments.count == 3 && arguments[0] == .string("active")
                && [.string("fine_tuning"), .string("single_preset")].contains(arguments[1])
                && arguments[2].typeTag == "i"
        case "/patch/current":
            return [["i", "s", "i"], ["i", "s", "i", "i"]].contains(arguments.map(\.typeTag))
        case "/config/delivery":
            // Since replies end in their unit: `,s style ,f settle ,s seconds`.
            if arguments.count == 3, [.string("continuous"), .string("discrete")].contains(arguments[0]),
               arguments[1].typeTag == "f", arguments[2] == .string("seconds") { return true }
            return arguments == [.string("continuous"), .float(0)]
        case "/config/timeout":
            return arguments.count == 2 && arguments[0].typeTag == "f" && arguments[1] == .string("seconds")
        case "/profile/audiogram":
            return arguments.last == .string("dB HL")
        case "/test/earphone":
            return arguments.last == .string("dB SPL")
        case "/test/config":
            return arguments.last == .string("current")
        case "/response/frequencies":
            return arguments.last == .string("Hz")
        case "/response/left", "/response/right":
            return arguments.last == .string("dB")
        case "/calibration", "/calibration/stop":
            return !arguments.isEmpty
        case "/calibration/tone":
            return arguments.last == .string("dBFS")
        case "/calibration/measured":
            return arguments.last == .string("dB")
        case "/config/max_output", "/config/calibration":
            return arguments.count == 2 && arguments[0].typeTag == "f" && arguments[1] == .string("dB SPL")
        default:
            return wasReplyBeforeTheTable(message)
        }
    }

    private static func wasReplyBeforeTheTable(_ message: OSCMessage) -> Bool {
        let replyOnly: Set<String> = [
            "/error", "/pong", "/synced", "/subscribed", "/unsubscribed", "/list/param", "/list/end",
            "/patch/item", "/patch/end", "/patch/saved", "/patch/deleted", "/profile/presets",
            "/session/interrupted", "/subscribe/pending", "/subscribe/challenge", "/source/challenge", "/source/confirmed", "/invalidated",
            "/response/stages", "/meters/subscribed", "/meters/unsubscribed", "/meters/input", "/meters/output",
            "/meters/reduction",
            "/midi/mapped", "/midi/unmapped", "/midi/item", "/midi/end", "/midi/learning", "/midi/learn/cancelled",
            "/personalization/gains/left", "/personalization/gains/right",
            // The replies of `/config/applicators`, added after the table was written.
            "/config/applicator", "/config/applicators/end",
        ]
        if replyOnly.contains(message.address) { return true }
        if ["/session", "/status", "/patch/current", "/personalization/gains"].contains(message.address) {
            return !message.arguments.isEmpty
        }
        switch message.address {
        case "/state", "/test/result": return message.arguments.count >= 2
        case "/test/state", "/test/no_response", "/test/masking_dilemma": return !message.arguments.isEmpty
        case "/test/export":
            // Added with the table: the export's one string.
            if message.arguments.count == 1, case .string = message.arguments[0] { return true }
            return false
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
        [.int32(0), .string("Transparent"), .int32(0), .int32(1)],
        [.string("continuous"), .float(0.3)], [.string("inactive")], [.string("active")],
        [.string("active"), .string("fine_tuning"), .int32(3)], [.string("active"), .string("other"), .int32(3)],
        [.string("active"), .string("single_preset"), .float(3)], [.int32(0), .string("x")],
        [.string("discrete"), .float(0.2), .string("seconds")], [.float(2), .string("seconds")],
        [.float(90), .string("dB SPL")], [.float(2), .string("minutes")],
        [.string("left"), .float(1000), .float(20), .string("dB HL")], [.string("left"), .float(1000), .float(20)],
        [.string("mine"), .float(1000), .float(7), .string("dB SPL")], [.string("tone_seconds"), .float(1), .string("current")],
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
            OSCMessage("/config/delivery", [.string("discrete"), .float(0.2), .string("seconds")]),
            OSCMessage("/config/timeout", [.float(2), .string("seconds")]),
            OSCMessage("/config/max_output", [.float(90), .string("dB SPL")]),
            OSCMessage("/config/calibration", [.float(105), .string("dB SPL")]),
            OSCMessage("/subscribe/pending", [.string("osc.udp://10.0.0.1:9000/"), .string("native"), .int32(30)]),
            OSCMessage("/subscribe/challenge", [.string("0123456789abcdef0123456789abcdef")]),
            OSCMessage("/patch/current", [.int32(0), .string("Transparent"), .int32(0)]),
            OSCMessage("/patch/current", [.int32(0), .string("Transparent"), .int32(0), .int32(1)]),
            OSCMessage("/invalidated", [.string("/processing/preset"), .string("calibration_changed")]),
            OSCMessage("/state", [.string("/filter/q"), .string("applied"), .float(3), .int32(42)]),
            OSCMessage("/error", [.string("/nothing"), .string("unknown address /nothing")]),
        ]
        for message in sent {
            #expect(OSCCommandTable.isReply(message), "\(message)")
        }
        // A request (discrete delivery with a settle time, a timeout, a value), or a malformed
        // request at a reply's address: answered.
        for message in [OSCMessage("/config/delivery", [.string("discrete"), .float(0.2)]),
                        OSCMessage("/config/timeout", [.float(2)]), OSCMessage("/session"),
                        OSCMessage("/filter/cutoff", [.float(1000)]), OSCMessage("/session", [.int32(1)]),
                        OSCMessage("/config/delivery", [.string("continuous"), .float(0.3)]),
                        OSCMessage("/patch/current", [.int32(1)])] {
            #expect(!OSCCommandTable.isReply(message), "\(message)")
        }
    }
}

extension ReplyRecognitionTests {
    /// docs/OSC.md names the replies that are never answered in prose; they must be the table's.
    @Test func theTransportRulesNameTheRepliesOfTheTable() throws {
        let text = OSCDocumentation.introduction(maximumPacketBytes: 16384)
        let rule = try #require(text.components(separatedBy: "**Replies are never answered.**").last?
            .components(separatedBy: "\n- ").first)
        let named = rule.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let replyAddresses = Set(OSCCommandTable.entries.flatMap(\.replyForms).map(\.address))
        #expect(Set(named) == replyAddresses, "\(named)")
        for address in named where !["/session", "/patch/current", "/config/delivery", "/config/timeout",
                                     "/config/max_output", "/config/calibration", "/profile/audiogram",
                                     "/test/config", "/test/earphone", "/test/export", "/response/frequencies", "/response/left",
                                     "/response/right", "/calibration/tone", "/calibration/measured"].contains(address) {
            #expect(OSCCommandTable.isReply(OSCMessage(address, [.string("a"), .string("b"), .int32(1)])), "\(address)")
        }
    }
}
