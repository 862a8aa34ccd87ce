import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// Applied changes survive a crash: the state journal records them within milliseconds.
    @Suite("Durable state") struct DurableState {
        /// The parameters the burst moves, each through values that only grow (so "at least as
        /// new" is "at least as large"), and the value of its k-th change.
        static let moved: [(address: String, value: @Sendable (Int) -> Float)] = [
            ("/filter/cutoff", { 100 + Float($0) }), ("/filter/q", { 0.2 + Float($0) * 0.001 }),
            ("/filter/gain", { -24 + Float($0) * 0.005 }), ("/ringmod/frequency", { 15 + Float($0) * 0.004 }),
            ("/ringmod/mix", { Float($0) * 0.0002 }), ("/output/gain", { -60 + Float($0) * 0.01 }),
        ]

        @Test("kill -9 during a 1 200 messages/s burst: every change reported applied ≥ 200 ms before is restored",
              arguments: [1.2, 2.0])
        func killDuringBurst(burstSeconds: Double) throws {
            let rig = try Rig.start(.server(directory: "sf-burst"))
            defer { rig.stop() }
            let instance = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1)
            let osc = instance.osc
            // Let the first full write pass, so the burst starts from a saved state: state.json
            // holds the parameters.
            #expect(waitForCondition(timeout: .seconds(10)) { savedParameters(rig.directory) != nil } != nil,
                    "state.json was never written")

            var applied: [(time: ContinuousClock.Instant, address: String, value: Float)] = []
            func collect() {
                let now = ContinuousClock.now
                for message in osc.collect(for: .zero) where message.address == "/state" && message.string(1) == "applied" {
                    if let address = message.string(0), let value = message.number(2) { applied.append((now, address, Float(value))) }
                }
            }
            let start = ContinuousClock.now
            var sent = 0
            var largestSent: [String: Float] = [:]
            while ContinuousClock.now - start < .seconds(burstSeconds) {
                let due = start + .microseconds(Int64(sent) * 1_000_000 / 1200)
                if ContinuousClock.now < due {
                    collect()
                    continue
                }
                let (address, value) = Self.moved[sent % Self.moved.count]
                let number = value(sent / Self.moved.count)
                osc.send(address, .float(number))
                largestSent[address] = number
                sent += 1
            }
            collect()
            let killed = ContinuousClock.now
            instance.kill9()
            report("burst: messages sent before kill -9", Double(sent), unit: "")
            report("burst: applied reports received", Double(applied.count), unit: "")

            let restarted = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1)
            defer { restarted.stop() }
            #expect(restarted.log.contains("state.journal"), "no journal replay was logged: \(restarted.log)")
            for (address, _) in Self.moved {
                let reportedEarly = applied.filter { $0.address == address && $0.time <= killed - .milliseconds(200) }
                let required = try #require(reportedEarly.map(\.value).max(), "\(address): nothing applied 200 ms before the kill")
                let restoredValue = try restarted.osc.query(address)
                guard case .float(let restored) = restoredValue else {
                    Issue.record("\(address): \(restoredValue)")
                    continue
                }
                let lastApplied = applied.filter { $0.address == address }.map(\.value).max() ?? required
                report("\(address): applied ≥200 ms before kill \(required), last applied \(lastApplied), restored", Double(restored), unit: "")
                #expect(restored >= required, "\(address): restored \(restored), but \(required) was reported applied ≥ 200 ms before the kill")
                #expect(restored <= largestSent[address]!, "\(address): restored \(restored), more than was ever sent")
            }
        }
    }
}
