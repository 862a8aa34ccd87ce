import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// OSC address patterns and atomic bundles, over real UDP against the real binary, checked
    /// with the independent test codec: what is answered, what changed, and what the audio does.
    @Suite("Address patterns and atomic bundles") struct AddressPatternsAndBundles {
        @Test("A pattern queries and sets every matching parameter; /list takes a pattern; the rest is /error")
        func addressPatterns() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            rig.osc.send("/ringmod/*")
            var replies: [OSCTestMessage] = []
            while replies.count < 3 {
                replies.append(try rig.osc.waitFor("the values of /ringmod/*") { $0.address.hasPrefix("/ringmod/") }.match)
            }
            #expect(replies == [OSCTestMessage("/ringmod/enabled", [.int(0)]), OSCTestMessage("/ringmod/frequency", [.float(22)]),
                                OSCTestMessage("/ringmod/mix", [.float(1)])])

            // One set for six matches: the frequency (15…40 Hz) and the three `enabled` (a float 30
            // is a true boolean) accept 30 and are set in one batch; /output/gain (−60…12 dB) and
            // /filter/gain (−24…24 dB) refuse it and are left alone.
            rig.osc.send("/{ringmod,filter,output}/{enabled,frequency,gain}", .float(30))
            expectApplied(try rig.osc.waitForTerminalState("/ringmod/frequency"), "/ringmod/frequency", .float(30))
            #expect(try rig.osc.query("/ringmod/frequency") == .float(30))
            #expect(try rig.osc.query("/output/gain") == .float(0))
            #expect(try rig.osc.query("/filter/gain") == .float(0))
            #expect(try rig.osc.query("/filter/enabled") == .int(1), "a float 30 is a true boolean: the filter accepted it")

            for (pattern, hint) in [("/patch/*", "address patterns select parameters only"),
                                    ("/filter/[q", "'[' at position 8 is never closed"),
                                    ("/nothing/*", "no parameter matches")] {
                expectErrorReply(try rig.osc.ask(pattern, [], reply: "/never"), for: pattern, hint: hint)
            }
            rig.osc.send("/list", .string("/ringmod"))
            let end = try rig.osc.waitFor("/list/end for /ringmod") { $0.address == "/list/end" }
            #expect(end.before.filter { $0.address == "/list/param" }.compactMap { $0.string(0) }
                    == ["/ringmod/enabled", "/ringmod/frequency", "/ringmod/mix"])
            #expect(end.match.arguments == [.int(3)])
        }

        @Test("A bundle with one invalid element changes nothing, values and audio; a valid one applies whole")
        func atomicBundles() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let audio = try rig.audio()
            expectApplied(try rig.osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            let timeout = try rig.osc.ask("/config/timeout", reply: "/config/timeout").arguments
            rig.osc.drain()

            // A valid cutoff, a valid command and an out-of-range Q: nothing of it happens.
            rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(200)]),
                            OSCTestMessage("/config/timeout", [.float(3)]),
                            OSCTestMessage("/filter/q", [.float(999)])])
            let answers = try rig.osc.sync()  // every answer to the bundle arrives before /synced
            #expect(answers.count == 1, "\(answers)")
            expectErrorReply(try #require(answers.first), for: "/filter/q", hint: "bundle element 3: /filter/q")
            #expect(answers.first?.string(1)?.hasSuffix("nothing in the bundle was applied") == true, "\(answers)")
            #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
            #expect(try rig.osc.ask("/config/timeout", reply: "/config/timeout").arguments == timeout)

            // The audio still follows the 1 kHz lowpass, not a 200 Hz one (which would take
            // 1 kHz down by about 28 dB instead of 3).
            let reference = CookbookBiquad(kind: .lpf, f0: 1000, q: 0.7071, dbGain: 0, fs: Capture.sampleRate)
            let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)[0]
            let measured = Capture.toneLevel(captured, frequency: 1000)
            let expected = reference.magnitudeDecibels(atFrequency: 1000, fs: Capture.sampleRate)
            report("1 kHz through the lowpass after a rejected bundle (expected \(String(format: "%.3f", expected)))", measured)
            #expect(abs(measured - expected) <= 0.1, "measured \(measured) dB, expected \(expected) dB")

            // The same bundle made valid is applied whole.
            rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(200)]),
                            OSCTestMessage("/config/timeout", [.float(3)]),
                            OSCTestMessage("/filter/q", [.float(2)])])
            #expect(try rig.osc.waitFor("/config/timeout ,f 3") { $0.address == "/config/timeout" }.match.arguments == [.float(3), .string("seconds")])
            expectApplied(try rig.osc.waitForTerminalState("/filter/cutoff"), "/filter/cutoff", .float(200))
            // The bundle landed in one cycle; q's own acknowledgement may be reported a moment
            // after the cutoff's.
            #expect(try rig.osc.pollQuery("/filter/q") { $0 == .float(2) } == .float(2))
        }

        @Test("Patch commands in a bundle are checked before anything of it is performed")
        func patchCommandsInBundles() throws {
            try Rig.run(.process(channels: 1)) { rig in
                for (element, hint) in [(OSCTestMessage("/patch/load", [.int(7777)]), "bundle element 2: no patch has number 7777"),
                                        (OSCTestMessage("/patch/save", [.string("a/b")]), "bundle element 2: patch name"),
                                        (OSCTestMessage("/patch/delete", [.int(0)]), "bundle element 2: ")] {
                    rig.osc.sendBundle([OSCTestMessage("/filter/cutoff", [.float(3000)]), element])
                    let answers = try rig.osc.sync()  // every answer to the bundle arrives before /synced
                    #expect(answers.count == 1, "\(answers)")
                    expectErrorReply(try #require(answers.first), for: element.address, hint: hint)
                    #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                }
            }
        }
    }
}
