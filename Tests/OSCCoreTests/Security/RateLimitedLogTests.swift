import OSCCore
import Synchronization
import Testing

@Suite struct LogRateLimiterTests {
    typealias Limiter = LogRateLimiter<String>

    @Test func atMostLimitLinesPerIntervalThenTheCount() {
        var limiter = Limiter(limit: 2, interval: .seconds(10))
        #expect(limiter.admit("a", at: .seconds(0)) == .log(suppressed: 0))
        #expect(limiter.admit("a", at: .seconds(1)) == .log(suppressed: 0))
        #expect(limiter.admit("a", at: .seconds(2)) == .suppress)
        #expect(limiter.admit("b", at: .seconds(2)) == .log(suppressed: 0))  // keys are separate
        #expect(limiter.admit("a", at: .seconds(9)) == .suppress)
        #expect(limiter.suppressedCount(for: "a") == 2)
        #expect(limiter.admit("a", at: .seconds(10)) == .log(suppressed: 2))  // a new window
        #expect(limiter.admit("a", at: .seconds(11)) == .log(suppressed: 0))
        #expect(limiter.admit("a", at: .seconds(12)) == .suppress)
    }

    @Test func sweepReportsWindowsThatEndedWithLinesHeldBack() {
        var limiter = Limiter(limit: 1, interval: .seconds(10))
        _ = limiter.admit("a", at: .zero)
        _ = limiter.admit("a", at: .seconds(1))
        _ = limiter.admit("a", at: .seconds(2))
        _ = limiter.admit("b", at: .seconds(5))
        #expect(limiter.sweep(at: .seconds(9)) == [])
        #expect(limiter.sweep(at: .seconds(10)) == [Limiter.Suppressed(key: "a", count: 2)])
        #expect(limiter.trackedKeyCount == 1)  // "a" forgotten, "b" still in its window
        #expect(limiter.sweep(at: .seconds(15)) == [])
        #expect(limiter.trackedKeyCount == 0)
        #expect(limiter.sweepIfDue(at: .seconds(20)) == [])
        _ = limiter.admit("c", at: .seconds(20))
        _ = limiter.admit("c", at: .seconds(21))
        #expect(limiter.sweepIfDue(at: .seconds(24)) == [])  // swept less than an interval ago
        #expect(limiter.sweepIfDue(at: .seconds(30)) == [Limiter.Suppressed(key: "c", count: 1)])
    }

    @Test func keysAreBoundedAndTheRestShareOneWindow() {
        var limiter = Limiter(limit: 1, interval: .seconds(10), maximumKeys: 2)
        #expect(limiter.admit("a", at: .zero) == .log(suppressed: 0))
        #expect(limiter.admit("b", at: .zero) == .log(suppressed: 0))
        #expect(limiter.admit("c", at: .zero) == .log(suppressed: 0))   // overflow window
        #expect(limiter.admit("d", at: .zero) == .suppress)             // shares it
        #expect(limiter.trackedKeyCount == 2)
        #expect(limiter.sweep(at: .seconds(10)) == [Limiter.Suppressed(key: nil, count: 1)])
        // Ended windows make room again.
        #expect(limiter.admit("d", at: .seconds(10)) == .log(suppressed: 0))
        #expect(limiter.trackedKeyCount == 1)
        _ = limiter.admit("e", at: .seconds(10))
        #expect(limiter.admit("f", at: .seconds(21)) == .log(suppressed: 0))  // d, e ended: pruned
        #expect(limiter.trackedKeyCount == 1)
    }
}

@Suite struct RateLimitedLogTests {
    final class Recorder: Sendable {
        let time = Mutex<Duration>(.zero)
        let lines = Mutex<[String]>([])
        func advance(to time: Duration) { self.time.withLock { $0 = time } }
        var written: [String] { lines.withLock { $0 } }
    }

    @Test func aFloodIsWrittenAsAFewLinesAndACount() {
        let recorder = Recorder()
        let log = RateLimitedLog<String>(limit: 2, per: .seconds(10), now: { recorder.time.withLock { $0 } },
                                         emit: { line in recorder.lines.withLock { $0.append(line) } })
        for index in 0..<100 {
            log.log("allow 10.0.0.9", "ignored a packet from 10.0.0.9 (#\(index)): not in --osc-allow")
        }
        recorder.advance(to: .seconds(10))
        log.log("allow 10.0.0.9", "ignored a packet from 10.0.0.9 (#100): not in --osc-allow")
        #expect(recorder.written == [
            "ignored a packet from 10.0.0.9 (#0): not in --osc-allow",
            "ignored a packet from 10.0.0.9 (#1): not in --osc-allow",
            "ignored a packet from 10.0.0.9 (#100): not in --osc-allow (98 more suppressed)",
        ])
    }

    @Test func countsOfAFloodThatStoppedAreStillWritten() {
        let recorder = Recorder()
        let log = RateLimitedLog<String>(limit: 1, per: .seconds(10), now: { recorder.time.withLock { $0 } },
                                         emit: { line in recorder.lines.withLock { $0.append(line) } })
        log.log("oversized", "dropped a 70000-byte packet")
        log.log("oversized", "dropped a 70000-byte packet")
        log.log("oversized", "dropped a 70000-byte packet")
        recorder.advance(to: .seconds(5))
        log.flushSuppressed()  // the window has not ended: nothing to say yet
        #expect(recorder.written == ["dropped a 70000-byte packet"])

        recorder.advance(to: .seconds(16))
        log.log("allow", "ignored a packet")  // sweeps ended windows first (last sweep 11 s ago)
        log.log("allow", "ignored a packet")
        #expect(recorder.written == ["dropped a 70000-byte packet", "oversized: 2 more suppressed", "ignored a packet"])

        recorder.advance(to: .seconds(26))
        log.flushSuppressed()
        log.flushSuppressed()
        #expect(recorder.written == ["dropped a 70000-byte packet", "oversized: 2 more suppressed", "ignored a packet",
                                     "allow: 1 more suppressed"])
    }

    @Test func suppressedLinesAreNotEvenBuilt() {
        let recorder = Recorder()
        let built = Mutex(0)
        let log = RateLimitedLog<String>(limit: 1, per: .seconds(1), now: { recorder.time.withLock { $0 } },
                                         emit: { _ in })
        func line() -> String { built.withLock { $0 += 1 }; return "x" }
        for _ in 0..<50 { log.log("k", line()) }
        #expect(built.withLock { $0 } == 1)
    }
}
