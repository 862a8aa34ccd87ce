import OSCCore
@testable import SoundFitOSC
import Testing

@Suite struct OSCCommandTableTests {
    @Test func everyAddressHasOneEntryAndEveryCommandItsHandler() {
        let addresses = OSCCommandTable.entries.map(\.address)
        #expect(Set(addresses).count == addresses.count)
        for entry in OSCCommandTable.entries {
            // A pure report (`/error`) is sent only; `/state` is a report that also answers a query.
            let isReport = entry.requestForms.isEmpty
            #expect((entry.prepare == nil) == isReport, "\(entry.address)")
            #expect(!isReport || entry.documentation.section == .reports, "\(entry.address)")
            #expect(!entry.replyForms.isEmpty, "\(entry.address) declares no reply")
            #expect(entry.requestForms.allSatisfy { $0.address == entry.address }, "\(entry.address)")
            if !isReport {
                #expect(OSCCommandTable.command(at: entry.address)?.address == entry.address)
            }
        }
        #expect(OSCCommandTable.command(at: "/error") == nil)
        #expect(OSCCommandTable.command(at: "/filter/cutoff") == nil)
    }

    @Test func theDocumentationIsTheTables() {
        #expect(OSCCommandDescription.all.map(\.address) == OSCCommandTable.entries.map(\.address))
        #expect(OSCControlSurface.commandAddresses == OSCCommandTable.entries.filter { $0.prepare != nil }.map(\.address))
    }

    @Test func messageForms() {
        let delivery = OSCMessageForm("/config/delivery", .exactly([.string(oneOf: ["discrete"]), .float]))
        #expect(delivery.matches(OSCMessage("/config/delivery", [.string("discrete"), .float(0.2)])))
        #expect(!delivery.matches(OSCMessage("/config/delivery", [.string("discrete"), .int32(1)])))
        #expect(!delivery.matches(OSCMessage("/config/delivery", [.string("continuous"), .float(0)])))
        #expect(!delivery.matches(OSCMessage("/config/timeout", [.string("discrete"), .float(0.2)])))
        #expect(OSCMessageForm("/state", .atLeast(2)).matches(OSCMessage("/state", [.int32(1), .int32(2)])))
        #expect(!OSCMessageForm("/state", .atLeast(2)).matches(OSCMessage("/state", [.int32(1)])))
        #expect(OSCMessageForm.bare("/session").matches(OSCMessage("/session")))
        #expect(!OSCMessageForm.bare("/session").matches(OSCMessage("/session", [.string("active")])))
        #expect(OSCMessageForm("/pong", .any).matches(OSCMessage("/pong", [.int32(1), .string("x")])))
    }
}
