import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// `--osc-allow`, `--osc-host`, the packet size limit.
    @Suite("OSC security") struct OSCSecurity {
        @Test("--osc-allow: packets from outside the list change nothing and get no reply; inside ones work")
        func allowList() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-allow", "127.0.0.2/32, 127.0.1.0/24"])) { rig in
                let (_, port) = try rig.soundfit.oscEndpoint()
                let allowed = try OSCTestClient(port: port, localAddress: loopbackAddress(2))
                try allowed.ping()
                try allowed.waitForSession()
                let alsoAllowed = try OSCTestClient(port: port, localAddress: 0x7F00_0105)  // 127.0.1.5
                try alsoAllowed.ping()

                for outsiderAddress in [loopbackAddress(1), loopbackAddress(3)] {
                    let outsider = try OSCTestClient(port: port, localAddress: outsiderAddress)
                    outsider.send("/ping")
                    outsider.send("/filter/cutoff", .float(5000))
                    outsider.send("/output/gain", .float(-30), .int(1))
                    outsider.send("/filter/cutoff")
                    outsider.send("/status")
                    outsider.send("/list")
                    outsider.send("/subscribe")
                    outsider.send("/subscribe", .string(allowed.url))
                    outsider.send("/unsubscribe", .string(allowed.url))
                    outsider.send("/session/deactivate")
                    outsider.send("/config/delivery", .string("discrete"), .float(5))
                    outsider.send("/config/timeout", .float(0.01))
                    outsider.send("/no/such/address", .int(1))
                    outsider.sendBundle([OSCTestMessage("/filter/enabled", [.int(1)]), OSCTestMessage("/filter/q", [.float(9)])])
                    outsider.sendRaw([0x2F, 0x78, 0x00])  // undecodable
                    // SoundFit answers an outsider nothing, not even /sync: an allowed client's
                    // /synced shows that every one of its packets was handled.
                    let replies = try outsider.received(bySyncOf: alsoAllowed)
                    #expect(replies.isEmpty, "an outsider (\(outsider.url)) got replies: \(replies)")

                    // Nothing changed, and no subscription was made for the outsider.
                    #expect(try allowed.query("/filter/cutoff") == .float(1000))
                    #expect(try allowed.query("/output/gain") == .float(0))
                    #expect(try allowed.query("/filter/enabled") == .int(0))
                    #expect(try allowed.query("/filter/q") == .float(0.7071))
                    #expect(try allowed.session().string(0) == "active")
                    let delivery = try allowed.ask("/config/delivery", reply: "/config/delivery")
                    #expect(delivery.string(0) == "continuous", "\(delivery)")
                    let timeout = try allowed.ask("/config/timeout", reply: "/config/timeout")
                    #expect(isClose(timeout.arguments.first, 10, tolerance: 1e-4), "\(timeout)")
                    expectApplied(try alsoAllowed.set("/filter/gain", .float(outsiderAddress == loopbackAddress(1) ? 3 : 4)),
                                  "/filter/gain", .float(outsiderAddress == loopbackAddress(1) ? 3 : 4))
                    // /synced follows the change's terminal /state to every subscriber: the outsider
                    // would hold it now had a subscription been made for it.
                    try alsoAllowed.sync()
                    #expect(outsider.collect(for: .zero).isEmpty, "the outsider received feedback")
                    // The allowed client's own subscription state is untouched: it was never subscribed.
                    expectErrorReply(try allowed.ask("/unsubscribe", reply: "/unsubscribed"), for: "/unsubscribe")
                }

                // Rejections are logged, rate limited: a flood of 300 packets gives a few lines.
                let flooder = try OSCTestClient(port: port, localAddress: loopbackAddress(4))
                for index in 0..<300 { flooder.send("/filter/cutoff", .float(Float(100 + index))) }
                // A denied sender gets no answer (no /sync either): an allowed client's /synced
                // shows that the whole flood was handled.
                #expect(try flooder.received(bySyncOf: alsoAllowed).isEmpty)
                #expect(try allowed.query("/filter/cutoff") == .float(1000))
                // The log is read from soundfit's stderr on a thread of the test's: wait for its first line.
                _ = rig.soundfit.process.waitForOutput(timeout: .seconds(10), fromStandardError: true) {
                    $0.contains("127.0.0.4") ? true : nil
                }
                let lines = rig.soundfit.process.standardError.split(separator: "\n").filter { $0.contains("127.0.0.4") }
                report("log lines about 300 packets from a sender outside --osc-allow", Double(lines.count), unit: "lines")
                #expect(!lines.isEmpty, "rejected packets are not logged")
                #expect(lines.count <= 20, "rejections are not rate limited: \(lines.count) lines")
            }
        }

        @Test("--osc-allow with a malformed list exits non-zero naming the option", arguments: [
            "127.0.0.256", "10.0.0.1/33", "10.0.0.1/8", "", "127.0.0.1,,127.0.0.2", "::1",
        ])
        func badAllowList(list: String) throws {
            let missing = UniqueName.make("sf-missing")
            let soundfit = try Rig.refusedStart(["--server", missing, "--no-start-server", "--osc-allow", list],
                                                environment: ["JACK_DEFAULT_SERVER": missing])
            defer { soundfit.stop() }
            let stderr = soundfit.process.standardError
            #expect(stderr.contains("--osc-allow"), "stderr does not name --osc-allow: \(stderr)")
        }

        @Test("Bad session options exit non-zero naming the option", arguments: [
            (["--tech-level", "0"], "--tech-level"), (["--tech-level", "5"], "--tech-level"),
            (["--personalization", "finetuning"], "--personalization"), (["--personalization", "both"], "--personalization"),
        ])
        func badSessionOptions(arguments: [String], option: String) throws {
            let missing = UniqueName.make("sf-missing")
            let soundfit = try Rig.refusedStart(["--server", missing, "--no-start-server"] + arguments,
                                                environment: ["JACK_DEFAULT_SERVER": missing])
            defer { soundfit.stop() }
            let stderr = soundfit.process.standardError
            #expect(stderr.split(separator: "\n").contains { !$0.hasPrefix("Usage:") && $0.contains(option) },
                    "stderr does not name \(option): \(stderr)")
        }

        @Test("--osc-host other than 127.0.0.1 logs a warning and listens there; oversized packets are dropped with a log line")
        func listenAddressAndPacketLimit() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-host", "127.0.0.3"])) { rig in
                let (host, port) = try rig.soundfit.oscEndpoint()
                #expect(host == "127.0.0.3")
                let warnings = rig.soundfit.process.standardError.split(separator: "\n").filter {
                    $0.localizedCaseInsensitiveContains("warning") && $0.contains("127.0.0.3")
                }
                #expect(!warnings.isEmpty, "no warning about listening on 127.0.0.3: \(rig.soundfit.process.standardError)")
                let osc = try OSCTestClient(port: port, serverAddress: loopbackAddress(3))
                try osc.ping()
                try osc.waitForSession()

                // Nothing listens on 127.0.0.1 at that port: a /ping there is refused (ICMP port
                // unreachable, seen by a connected socket).
                #expect(try OSCTestClient.portRefuses(address: 0x7F00_0001, port: port))

                // A 20 000-byte bundle (limit 16 384) is dropped whole: no reply, a log line.
                let padding = OSCTestMessage("/filter/cutoff", [.blob([UInt8](repeating: 0, count: 19_900))])
                let bundle = OSCWire.encodeBundle([OSCTestMessage("/ping", [.int(7)]), OSCTestMessage("/filter/q", [.float(3)]), padding])
                osc.sendRaw(bundle)
                let replies = try osc.sync()  // an answer to the packet would arrive before /synced
                #expect(replies.isEmpty, "an oversized packet was answered: \(replies.prefix(3))")
                #expect(try osc.query("/filter/q") == .float(0.7071))
                // The log line reaches this process through stderr's pipe on its own schedule: its
                // arrival is the event (the window before /sync gave it time).
                _ = waitForCondition(timeout: .seconds(5)) { rig.soundfit.process.standardError.contains("\(bundle.count)") }
                #expect(rig.soundfit.process.standardError.contains("\(bundle.count)"),
                        "no log line names the dropped \(bundle.count)-byte packet: \(rig.soundfit.process.standardError)")
                try osc.ping()
            }
        }
    }
}
