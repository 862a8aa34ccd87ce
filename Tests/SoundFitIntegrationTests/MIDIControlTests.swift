import Foundation
import Testing

extension SoundFitIntegration {
    /// MIDI control through a real JACK graph: a test client with a MIDI output port (a fader
    /// box) connected to the real binary's `midi_in`, mappings and learn over UDP OSC, values
    /// checked by query and by the audio level measured through JACK.
    @Suite("MIDI control") struct MIDIControl {
        /// The output gain a control change value stands for: 0…127 over −60…12 dB, linear in dB.
        static func gain(forControlValue value: Int) -> Double { -60 + Double(value) / 127 * 72 }

        @Test("CC 7 on channel 1 mapped to /output/gain: 0, 64 and 127 give −60 dB, the taper's middle and +12 dB, in the query and in the audio; a subscriber sees each change")
        func controlChangeMovesOutputGain() throws {
            try Rig.run(.process()) { rig in
                let mapped = try rig.osc.ask("/midi/map", [.string("/output/gain"), .int(1), .int(7)], reply: "/midi/mapped")
                #expect(mapped.address == "/midi/mapped" && mapped.arguments == [.string("/output/gain"), .int(1), .int(7)], "\(mapped)")

                let subscriber = try OSCTestClient.subscribed(to: rig.ready.oscPort)
                let fader = try TestJackClient(server: rig.server.name, name: "sfmidi", roles: .midiSource)
                defer { fader.close() }
                try fader.connectMIDI(toSoundFit: rig.ready.client, osc: rig.osc)
                let audio = try rig.audio()

                for value in [0, 64, 127] {
                    let expected = Self.gain(forControlValue: value)
                    fader.controlChange(channel: 1, controller: 7, value: value)
                    try fader.waitUntilSent()
                    let queried = try rig.osc.pollQuery("/output/gain") { isClose($0, expected, tolerance: 1e-3) }
                    #expect(isClose(queried, expected, tolerance: 1e-3), "CC 7 = \(value): /output/gain is \(queried), expected \(expected)")
                    let fed = try subscriber.waitForFeedback("/output/gain") { isClose($0, expected, tolerance: 1e-3) }
                    #expect(isClose(fed, expected, tolerance: 1e-3))
                    let output = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                    for channel in output {
                        let level = Capture.toneLevel(channel, frequency: 1000)
                        report("output level at CC 7 = \(value)", level)
                        #expect(abs(level - expected) < 0.1, "CC 7 = \(value): measured \(level) dB, expected \(expected) dB")
                    }
                }
                // An unmapped controller changes nothing: the mapped change after it (MIDI is
                // handled in order) is the first /output/gain feedback the subscriber gets.
                fader.controlChange(channel: 2, controller: 7, value: 0)
                fader.controlChange(channel: 1, controller: 8, value: 0)
                try fader.waitUntilSent()
                let middle = Self.gain(forControlValue: 64)
                fader.controlChange(channel: 1, controller: 7, value: 64)
                try fader.waitUntilSent()
                let next = try subscriber.waitFor("feedback of CC 7 = 64") { $0.address == "/output/gain" }
                #expect(next.match.arguments.count == 1 && isClose(next.match.arguments[0], middle, tolerance: 1e-3),
                        "an unmapped controller moved /output/gain: \(next.match)")
                fader.controlChange(channel: 1, controller: 7, value: 127)
                try fader.waitUntilSent()
                _ = try subscriber.waitForFeedback("/output/gain") { isClose($0, 12, tolerance: 1e-3) }
                #expect(isClose(try rig.osc.query("/output/gain"), 12, tolerance: 1e-3))
            }
        }

        @Test("MIDI learn maps the next control change; list, unmap by address and by channel/controller, cancel and timeout answer as documented")
        func learnListUnmap() throws {
            let rig = try Rig.start(.process())
            defer { rig.stop() }
            let fader = try TestJackClient(server: rig.server.name, name: "sfmidi", roles: .midiSource)
            defer { fader.close() }
            try fader.connectMIDI(toSoundFit: rig.ready.client, osc: rig.osc)

            // Learn: the reply comes once a control change arrived.
            let learning = try rig.osc.ask("/midi/learn", [.string("/filter/cutoff")], reply: "/midi/learning")
            #expect(learning.arguments == [.string("/filter/cutoff"), .int(30)], "\(learning)")
            fader.controlChange(channel: 3, controller: 20, value: 127)
            let learnt = try rig.osc.waitFor("/midi/mapped") { $0.address == "/midi/mapped" || $0.address == "/error" }.match
            #expect(learnt.address == "/midi/mapped" && learnt.arguments == [.string("/filter/cutoff"), .int(3), .int(20)], "\(learnt)")
            // The learnt controller now drives the cutoff: 0 → 20 Hz (logarithmic taper).
            fader.controlChange(channel: 3, controller: 20, value: 0)
            try fader.waitUntilSent()
            #expect(isClose(try rig.osc.pollQuery("/filter/cutoff") { isClose($0, 20, tolerance: 1e-3) }, 20, tolerance: 1e-3))
            // The geometric middle of 20…20000 Hz lies at 63.5: CC 64 lands just above it.
            fader.controlChange(channel: 3, controller: 20, value: 64)
            try fader.waitUntilSent()
            let middle = 20 * pow(1000, 64.0 / 127)
            #expect(isClose(try rig.osc.pollQuery("/filter/cutoff") { isClose($0, middle, tolerance: 0.01) }, middle, tolerance: 0.01))

            _ = try rig.osc.ask("/midi/map", [.string("/output/gain"), .int(1), .int(7)], reply: "/midi/mapped")
            _ = try rig.osc.ask("/midi/map", [.string("/ringmod/mix"), .int(16), .int(0)], reply: "/midi/mapped")
            rig.osc.send("/midi/list")
            let end = try rig.osc.waitFor("/midi/end") { $0.address == "/midi/end" }
            let items = end.before.filter { $0.address == "/midi/item" }.map(\.arguments)
            #expect(end.match.arguments == [.int(3)])
            #expect(items == [[.string("/output/gain"), .int(1), .int(7)], [.string("/filter/cutoff"), .int(3), .int(20)],
                              [.string("/ringmod/mix"), .int(16), .int(0)]], "\(items)")

            // Unmap by address: the controller no longer moves the cutoff (CC 7, still mapped,
            // marks when the message behind it was handled).
            let unmapped = try rig.osc.ask("/midi/unmap", [.string("/filter/cutoff")], reply: "/midi/unmapped")
            #expect(unmapped.arguments == [.string("/filter/cutoff"), .int(3), .int(20)], "\(unmapped)")
            fader.controlChange(channel: 3, controller: 20, value: 127)
            fader.controlChange(channel: 1, controller: 7, value: 0)
            try fader.waitUntilSent()
            _ = try rig.osc.pollQuery("/output/gain") { isClose($0, -60, tolerance: 1e-3) }
            #expect(isClose(try rig.osc.query("/filter/cutoff"), middle, tolerance: 0.01))
            // Unmap by channel and controller.
            let byPair = try rig.osc.ask("/midi/unmap", [.int(16), .int(0)], reply: "/midi/unmapped")
            #expect(byPair.arguments == [.string("/ringmod/mix"), .int(16), .int(0)], "\(byPair)")
            expectErrorReply(try rig.osc.ask("/midi/unmap", [.int(16), .int(0)], reply: "/midi/unmapped"), for: "/midi/unmap",
                             hint: "nothing is mapped")
            expectErrorReply(try rig.osc.ask("/midi/unmap", [.string("/filter/q")], reply: "/midi/unmapped"), for: "/midi/unmap",
                             hint: "no MIDI mapping")

            // Cancel: the learn answers /error, the cancel its own reply; a control change then maps nothing.
            _ = try rig.osc.ask("/midi/learn", [.string("/ringmod/frequency")], reply: "/midi/learning")
            rig.osc.send("/midi/learn/cancel")
            let cancelled = try rig.osc.waitFor("/midi/learn/cancelled") { $0.address == "/midi/learn/cancelled" }
            #expect(cancelled.match.arguments == [.string("/ringmod/frequency")])
            // The learn's /error and the cancel's reply come from two tasks, in either order.
            let isLearnError = { (message: OSCTestMessage) in message.address == "/error" && message.string(0) == "/midi/learn" }
            let learnError = try cancelled.before.first(where: isLearnError) ?? rig.osc.waitFor("learn /error", where: isLearnError).match
            #expect(learnError.string(1)?.contains("cancelled") == true, "\(learnError)")
            expectErrorReply(try rig.osc.ask("/midi/learn/cancel", reply: "/midi/learn/cancelled"), for: "/midi/learn/cancel",
                             hint: "no MIDI learn")
            // A timeout of 1 s with no control change.
            _ = try rig.osc.ask("/midi/learn", [.string("/ringmod/frequency"), .int(1)], reply: "/midi/learning")
            let timedOut = try rig.osc.waitFor("learn timeout") { $0.address == "/error" && $0.string(0) == "/midi/learn" }.match
            #expect(timedOut.string(1)?.contains("within 1 s") == true, "\(timedOut)")
            rig.osc.send("/midi/list")
            #expect(try rig.osc.waitFor("/midi/end") { $0.address == "/midi/end" }.match.arguments == [.int(1)])
        }

        @Test("Bad /midi/* requests are answered with /error and change nothing: unknown address, channel 0 or 17, controller 128, read-only parameter, wrong arguments")
        func badRequests() throws {
            let rig = try Rig.start(.process())
            defer { rig.stop() }
            let cases: [(String, [OSCValue], String)] = [
                ("/midi/map", [.string("/nope"), .int(1), .int(7)], "unknown address"),
                ("/midi/map", [.string("/output/gain"), .int(0), .int(7)], "1…16"),
                ("/midi/map", [.string("/output/gain"), .int(17), .int(7)], "1…16"),
                ("/midi/map", [.string("/output/gain"), .int(1), .int(128)], "0…127"),
                ("/midi/map", [.string("/output/gain"), .int(1), .int(-1)], "0…127"),
                ("/midi/map", [.string("/processing/fitting"), .int(1), .int(7)], "read-only"),
                ("/midi/map", [.string("/processing/can_enable"), .int(1), .int(7)], "read-only"),
                ("/midi/map", [.string("/output/gain"), .int(1)], "expects"),
                ("/midi/map", [.int(1), .int(1), .int(7)], "expects"),
                ("/midi/learn", [.string("/nope")], "unknown address"),
                ("/midi/learn", [.string("/processing/fitting")], "read-only"),
                ("/midi/learn", [.string("/output/gain"), .int(0)], "timeout"),
                ("/midi/unmap", [.int(0), .int(7)], "1…16"),
                ("/midi/unmap", [.int(1), .int(128)], "0…127"),
                ("/midi/unmap", [.string("/nope")], "unknown address"),
                ("/midi/list", [.int(1)], "no arguments"),
            ]
            for (address, arguments, hint) in cases {
                let reply = try rig.osc.ask(address, arguments, reply: "/midi/never")
                expectErrorReply(reply, for: address, hint: hint)
            }
            rig.osc.send("/midi/list")
            #expect(try rig.osc.waitFor("/midi/end") { $0.address == "/midi/end" }.match.arguments == [.int(0)])
        }

        @Test("Program change N loads factory patch N; out of range is reported to subscribers and changes nothing; mappings survive a restart")
        func programChangeAndRestart() throws {
            let rig = try Rig.start(.stateful())
            defer { rig.stop() }
            var osc = try rig.osc
            _ = try osc.ask("/midi/map", [.string("/output/gain"), .int(1), .int(7)], reply: "/midi/mapped")
            let subscriber = try OSCTestClient.subscribed(to: try rig.soundfit.ready.oscPort)
            let fader = try TestJackClient(server: rig.server.name, name: "sfmidi", roles: .midiSource)
            defer { fader.close() }
            try fader.connectMIDI(toSoundFit: try rig.soundfit.ready.client, osc: osc)

            fader.programChange(channel: 1, program: 2)
            let current = try subscriber.waitFor("/patch/current 2") { $0.address == "/patch/current" && $0.arguments.first == .int(2) }
            #expect(current.match.string(1) == "Lowpass 1 kHz", "\(current.match)")
            #expect(try osc.ask("/patch/current", reply: "/patch/current").arguments.prefix(3) == [.int(2), .string("Lowpass 1 kHz"), .int(0)])
            #expect(isClose(try osc.query("/filter/cutoff"), 1000, tolerance: 1e-3))

            // Program 99: no such factory patch.
            fader.programChange(channel: 5, program: 99)
            let refused = try subscriber.waitFor("/error /midi/program") { $0.address == "/error" && $0.string(0) == "/midi/program" }.match
            #expect(refused.string(1)?.contains("no factory patch 99") == true, "\(refused)")
            #expect(refused.string(1)?.contains("channel 5") == true, "\(refused)")
            #expect(try osc.ask("/patch/current", reply: "/patch/current").arguments.prefix(2) == [.int(2), .string("Lowpass 1 kHz")])

            // The mapping is kept in the state: after a restart it is listed and works.
            rig.stopSoundFit()
            osc = try rig.start().osc
            osc.send("/midi/list")
            let end = try osc.waitFor("/midi/end") { $0.address == "/midi/end" }
            #expect(end.match.arguments == [.int(1)])
            #expect(end.before.filter { $0.address == "/midi/item" }.map(\.arguments) == [[.string("/output/gain"), .int(1), .int(7)]])
            try fader.connectMIDI(toSoundFit: try rig.soundfit.ready.client, osc: osc)
            fader.controlChange(channel: 1, controller: 7, value: 127)
            try fader.waitUntilSent()
            #expect(isClose(try osc.pollQuery("/output/gain") { isClose($0, 12, tolerance: 1e-3) }, 12, tolerance: 1e-3))
        }

        @Test("The MIDI input port is described by JACK metadata")
        func midiPortMetadata() throws {
            try Rig.run(.process()) { rig in
                let port = "\(rig.ready.client):midi_in"
                let properties = try JackTools.run("jack_property", server: rig.server.name, "-l", "--port", port)
                #expect(properties.contains("MIDI control in"), "\(properties)")
            }
        }

        @Test("--no-midi: no midi_in port; /midi/learn answers /error naming --no-midi; mappings are still kept")
        func withoutMIDIInput() throws {
            let rig = try Rig.start(.process(arguments: ["--no-midi"]))
            defer { rig.stop() }
            let ports = try JackTools.run("jack_lsp", server: rig.server.name)
            #expect(ports.contains("\(rig.ready.client):input_1"), "\(ports)")
            #expect(!ports.contains("midi_in"), "\(ports)")
            expectErrorReply(try rig.osc.ask("/midi/learn", [.string("/filter/cutoff")], reply: "/midi/learning"),
                             for: "/midi/learn", hint: "--no-midi")
            let mapped = try rig.osc.ask("/midi/map", [.string("/output/gain"), .int(1), .int(7)], reply: "/midi/mapped")
            #expect(mapped.arguments == [.string("/output/gain"), .int(1), .int(7)], "\(mapped)")
            rig.osc.send("/midi/list")
            let listed = try rig.osc.waitFor("/midi/end") { $0.address == "/midi/end" }
            #expect(listed.before.filter { $0.address == "/midi/item" }.count == 1, "\(listed.before)")
        }
    }
}
