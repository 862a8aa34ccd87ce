import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// What a client can make SoundFit keep is bounded: interruption reasons (length and count).
    @Suite("Bounded client state") struct BoundedClientState {
        /// Resident memory of a process in MiB, from /proc/PID/status.
        private func residentMiB(_ pid: pid_t) throws -> Double {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let kib = Double(line.split(separator: " ").dropFirst().first ?? "") else {
                throw IntegrationError("no VmRSS in /proc/\(pid)/status")
            }
            return kib / 1024
        }

        @Test("3 000 unique 8 KB interruption reasons leave memory flat; 16 reasons at most, 128 bytes each")
        func interruptionReasons() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let long = String(repeating: "r", count: 8000)
                expectErrorReply(try rig.osc.ask("/session/interrupt", [.string(long)], reply: "/session/interrupted"),
                                 for: "/session/interrupt", hint: "128 bytes")
                let before = try residentMiB(rig.soundfit.process.pid)
                for index in 0..<3000 {
                    rig.osc.send("/session/interrupt", .string("\(index)-" + long))
                    // Flow control: every 100 requests, wait until all were answered (and read the
                    // answers), so neither socket's buffer overflows.
                    if index % 100 == 99 { try rig.osc.sync(Int32(index)) }
                }
                try rig.osc.ping(timeout: .seconds(30))
                try rig.osc.sync()  // every answer to the 3 000 requests has arrived
                let after = try residentMiB(rig.soundfit.process.pid)
                report("RSS growth after 3 000 unique 8 KB interruption reasons", after - before, unit: "MiB")
                #expect(after - before < 8, "memory grew by \(after - before) MiB")

                for index in 0..<16 {
                    let reply = try rig.osc.ask("/session/interrupt", [.string("reason \(index)")], reply: "/session/interrupted")
                    #expect(reply.address == "/session/interrupted", "\(index): \(reply)")
                }
                expectErrorReply(try rig.osc.ask("/session/interrupt", [.string("one more")], reply: "/session/interrupted"),
                                 for: "/session/interrupt", hint: "at most 16")
                #expect(try rig.osc.ask("/session/resolve", [.string("reason 0")], reply: "/session/interrupted").arguments == [.int(1)])
            }
        }
    }
}
