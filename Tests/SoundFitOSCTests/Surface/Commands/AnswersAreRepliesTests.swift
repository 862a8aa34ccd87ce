import OSCCore
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// No answer SoundFit sends can be a request at another SoundFit: a forged source makes the
/// answer go to another server, and an answer that is a request there is answered in turn
/// (`/config/timeout ,f 10` → `/config/timeout ,f 10` → … forever). Generated from the command
/// table: every command's documented examples and its bare form are sent, and every message
/// answered to the requester must be a reply form of the table. Value messages on parameter
/// addresses are excepted by contract (a query's answer and feedback are a set; a SoundFit
/// answers a set with `/state`, a reply).
@Suite struct AnswersAreRepliesTests {
    /// `oscsend localhost 7700 /address types args…` → the message (quotes and `#` comments handled).
    static func message(fromExample line: String) -> OSCMessage? {
        var words: [String] = []
        var current = ""
        var quoted = false
        for character in line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0] {
            if character == "\"" { quoted.toggle(); continue }
            if character == " " && !quoted {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        guard words.count >= 4, words[0] == "oscsend", words[3].hasPrefix("/") else { return nil }
        let types = words.count > 4 ? Array(words[4]) : []
        let values = Array(words.dropFirst(5))
        guard types.count == values.count else { return nil }
        var arguments: [OSCArgument] = []
        for (type, value) in zip(types, values) {
            switch type {
            case "i": guard let int = Int32(value) else { return nil }; arguments.append(.int32(int))
            case "f": guard let float = Float(value) else { return nil }; arguments.append(.float(float))
            case "s": arguments.append(.string(value))
            default: return nil
            }
        }
        return OSCMessage(words[3], arguments)
    }

    @Test func everyAnswerToEveryCommandIsAReplyForm() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let parameterAddresses = Set(ParameterModel.all.flatMap { [$0.address, $0.normalizedAddress] })
        var requests: [OSCMessage] = []
        for command in OSCCommandTable.entries where command.prepare != nil {
            requests.append(OSCMessage(command.address))
            requests += command.documentation.examples.compactMap(Self.message(fromExample:))
        }
        #expect(requests.count > 30)
        var answers = 0
        let requesters = requests.indices.map { OSCPeer(host: "127.0.0.1", port: UInt16(20000 + $0))! }
        for (index, request) in requests.enumerated() {
            let requester = requesters[index]
            surface.send(request, from: requester)
            // `/synced` follows every answer to the request (its terminal state included); the
            // id is one no example uses, so a `/sync` example's own answer is not taken for it.
            let synced = OSCMessage("/synced", [.int32(Int32(100_000 + index))])
            surface.send(OSCMessage("/sync", synced.arguments), from: requester)
            let sent = await surface.messages(to: requester, untilAll: [synced])
            #expect(sent.contains(synced), "\(request): not synced within \(SurfaceHarness.patience)")
            let received = sent.filter { $0 != synced }
            answers += received.count
            for answer in received where !parameterAddresses.contains(answer.address) {
                #expect(OSCCommandTable.isReply(answer), "\(request) was answered \(answer), which another SoundFit would answer")
            }
        }
        // What was sent later (a subscription's stream) must be replies too.
        for (request, requester) in zip(requests, requesters) {
            for answer in await surface.everything(to: requester, within: .zero) where !parameterAddresses.contains(answer.address) {
                #expect(OSCCommandTable.isReply(answer), "\(request) was answered \(answer), which another SoundFit would answer")
            }
        }
        #expect(answers > requests.count, "the requests were answered")
    }
}
